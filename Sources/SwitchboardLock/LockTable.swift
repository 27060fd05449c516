import SwitchboardCore

/// The pure state of the built-in lock store: the locks of every channel (of every app), their
/// owners with fencing tokens, their lines of waiters, and the ttl countdowns of lost owners.
///
/// Invariant: a free lock has nobody in line, because a released lock goes straight to the
/// first waiter. Fencing tokens come from one counter, so they only grow for every lock, also
/// across a removal and a new `setLock` of the same name.
struct LockTable: Sendable {
    /// A lock: its channel and its name.
    struct Key: Hashable, Comparable, Sendable {
        let channel: ChannelKey
        let name: String

        static func < (a: Key, b: Key) -> Bool {
            (a.channel.app, a.channel.type.rawValue, a.channel.name, a.name)
                < (b.channel.app, b.channel.type.rawValue, b.channel.name, b.name)
        }
    }

    private struct Owner {
        var caller: Caller
        var fencingToken: UInt64
    }

    private struct Entry {
        var ttl: Int
        var owner: Owner?
        var line: [Caller] = []
    }

    private var entries: [Key: Entry] = [:]
    private var names: [ChannelKey: Set<String>] = [:]
    /// How many locks each app has.
    private var counts: [AppID: Int] = [:]
    private var owned: [SessionID: Set<Key>] = [:]
    private var waiting: [SessionID: Set<Key>] = [:]
    private var suspended: Set<SessionID> = []
    /// When each lost owner's ttl runs out.
    private var countdowns: [Key: WallClockTime] = [:]
    private var lastFencingToken: UInt64 = 0

    // MARK: Operations

    mutating func set(
        _ name: String, in channel: ChannelKey, ttl: Int, maxLocks: Int, maxLocksInApp: Int = .max
    ) throws(LockRefusal) -> [LockEffect] {
        let key = Key(channel: channel, name: name)
        guard entries[key] == nil else { throw .alreadyExists }
        guard (names[channel]?.count ?? 0) < maxLocks else { throw .tooManyLocks(limit: maxLocks) }
        guard counts[channel.app, default: 0] < maxLocksInApp else { throw .tooManyLocksInApp(limit: maxLocksInApp) }
        entries[key] = Entry(ttl: ttl)
        names[channel, default: []].insert(name)
        counts[channel.app, default: 0] += 1
        return [.event(channel, .lockSet, detail(key))]
    }

    mutating func remove(_ name: String, in channel: ChannelKey) throws(LockRefusal) -> [LockEffect] {
        let key = Key(channel: channel, name: name)
        guard let entry = entries[key] else { throw .notExist }
        var effects: [LockEffect] = [.event(channel, .lockRemoved, detail(key))]
        entries[key] = nil
        names.remove(name, fromSetAt: channel)
        counts[channel.app, default: 0] -= 1
        if counts[channel.app] == 0 { counts[channel.app] = nil }
        countdowns[key] = nil
        if let owner = entry.owner { owned.remove(key, fromSetAt: owner.caller.session) }
        for waiter in entry.line {
            waiting.remove(key, fromSetAt: waiter.session)
            effects.append(.waitEnded(waiter.session, channel, lockName: name, .lockRemoved))
        }
        return effects
    }

    mutating func acquire(
        _ name: String, in channel: ChannelKey, by caller: Caller, wait: Bool, now: WallClockTime
    ) throws(LockRefusal) -> (LockAcquisition, [LockEffect]) {
        let key = Key(channel: channel, name: name)
        guard let entry = entries[key] else { throw .notExist }
        guard let owner = entry.owner else {
            let token = give(key, to: caller, now: now)
            return (.acquired(fencingToken: token), [.event(channel, .lockAcquired, detail(key))])
        }
        if owner.caller.session == caller.session { return (.acquired(fencingToken: owner.fencingToken), []) }
        guard wait else { throw .heldByOther(owner: owner.caller.userId) }
        guard !entry.line.contains(where: { $0.session == caller.session }) else { throw .alreadyWaiting }
        entries[key]?.line.append(caller)
        waiting[caller.session, default: []].insert(key)
        return (.queued, [])
    }

    mutating func release(_ name: String, in channel: ChannelKey, by caller: Caller, now: WallClockTime) throws(LockRefusal) -> [LockEffect] {
        let key = Key(channel: channel, name: name)
        guard let entry = entries[key] else { throw .notExist }
        if entry.owner?.caller.session == caller.session { return handOver(key, .lockReleased, now: now) }
        if leaveLine(key, caller.session) { return [.waitEnded(caller.session, channel, lockName: name, .withdrawn)] }
        throw .notOwner(owner: entry.owner?.caller.userId ?? "")
    }

    mutating func revoke(_ name: String, in channel: ChannelKey, from userId: UserID, now: WallClockTime) throws(LockRefusal) -> [LockEffect] {
        let key = Key(channel: channel, name: name)
        guard let entry = entries[key] else { throw .notExist }
        guard let owner = entry.owner, owner.caller.userId == userId else {
            throw .notOwner(owner: entry.owner?.caller.userId ?? "")
        }
        return handOver(key, .lockReleased, now: now)
    }

    func locks(in channel: ChannelKey) -> [LockDetail] {
        (names[channel] ?? []).sorted().map { detail(Key(channel: channel, name: $0)) }
    }

    func holder(of name: String, in channel: ChannelKey) throws(LockRefusal) -> LockHolding? {
        guard let entry = entries[Key(channel: channel, name: name)] else { throw .notExist }
        return entry.owner.map { LockHolding(session: $0.caller.session, userId: $0.caller.userId, fencingToken: $0.fencingToken) }
    }

    // MARK: Sessions and time

    mutating func suspend(_ session: SessionID, now: WallClockTime) {
        suspended.insert(session)
        for key in owned[session] ?? [] where countdowns[key] == nil {
            guard let ttl = entries[key]?.ttl else { continue }
            countdowns[key] = now + .seconds(ttl)
        }
    }

    mutating func resume(_ session: SessionID) {
        suspended.remove(session)
        for key in owned[session] ?? [] { countdowns[key] = nil }
    }

    mutating func end(_ session: SessionID, now: WallClockTime) -> [LockEffect] {
        suspended.remove(session)
        for key in waiting[session] ?? [] { _ = leaveLine(key, session) }
        return (owned[session] ?? []).sorted().flatMap { handOver($0, .lockReleased, now: now) }
    }

    mutating func leave(_ session: SessionID, channel: ChannelKey, now: WallClockTime) -> [LockEffect] {
        var effects: [LockEffect] = []
        for key in (waiting[session] ?? []).filter({ $0.channel == channel }).sorted() where leaveLine(key, session) {
            effects.append(.waitEnded(session, channel, lockName: key.name, .leftChannel))
        }
        for key in (owned[session] ?? []).filter({ $0.channel == channel }).sorted() {
            effects += handOver(key, .lockReleased, now: now)
        }
        return effects
    }

    mutating func expire(now: WallClockTime) -> [LockEffect] {
        let due = countdowns.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        return due.flatMap { handOver($0.key, .lockReleased, now: now) }
    }

    /// How many locks the channels of `app` have (for tests and diagnostics).
    func count(in app: AppID) -> Int { counts[app] ?? 0 }

    /// The locks of `app` (nil: every app), held and waited for: a walk over every lock, for a
    /// scrape or an operator's question, not for a client's call.
    func counts(in app: AppID?) -> LockCounts {
        var counts = LockCounts()
        for (key, entry) in entries where app == nil || key.channel.app == app {
            counts.locks += 1
            if entry.owner != nil { counts.held += 1 }
            counts.waiters += entry.line.count
        }
        return counts
    }

    /// How many sessions wait for the lock (for tests and diagnostics).
    func lineLength(of name: String, in channel: ChannelKey) -> Int {
        entries[Key(channel: channel, name: name)]?.line.count ?? 0
    }

    /// When the lost owner's ttl runs out; nil while nobody's countdown runs (for tests and diagnostics).
    func deadline(of name: String, in channel: ChannelKey) -> WallClockTime? {
        countdowns[Key(channel: channel, name: name)]
    }

    // MARK: Helpers

    private func detail(_ key: Key) -> LockDetail {
        let entry = entries[key]
        return LockDetail(
            lockName: key.name, owner: entry?.owner?.caller.userId ?? "", ttl: entry?.ttl ?? 0,
            fencingToken: entry?.owner?.fencingToken ?? 0)
    }

    /// Makes `caller` the owner of the free lock `key` with a new fencing token; a suspended
    /// caller's ttl starts at once.
    private mutating func give(_ key: Key, to caller: Caller, now: WallClockTime) -> UInt64 {
        lastFencingToken += 1
        entries[key]?.owner = Owner(caller: caller, fencingToken: lastFencingToken)
        owned[caller.session, default: []].insert(key)
        if suspended.contains(caller.session), let ttl = entries[key]?.ttl {
            countdowns[key] = now + .seconds(ttl)
        }
        return lastFencingToken
    }

    /// The owner loses the lock (`type` says how) and the first in line, if any, gets it.
    private mutating func handOver(_ key: Key, _ type: RtmLockEventType, now: WallClockTime) -> [LockEffect] {
        guard let owner = entries[key]?.owner else { return [] }
        var effects: [LockEffect] = [.event(key.channel, type, detail(key))]
        entries[key]?.owner = nil
        countdowns[key] = nil
        owned.remove(key, fromSetAt: owner.caller.session)
        guard let next = entries[key]?.line.first else { return effects }
        entries[key]?.line.removeFirst()
        waiting.remove(key, fromSetAt: next.session)
        let token = give(key, to: next, now: now)
        effects.append(.event(key.channel, .lockAcquired, detail(key)))
        effects.append(.granted(next.session, key.channel, lockName: key.name, fencingToken: token))
        return effects
    }

    /// Takes `session` out of the line of `key`; false when it was not in it.
    private mutating func leaveLine(_ key: Key, _ session: SessionID) -> Bool {
        guard let index = entries[key]?.line.firstIndex(where: { $0.session == session }) else { return false }
        entries[key]?.line.remove(at: index)
        waiting.remove(key, fromSetAt: session)
        return true
    }
}
