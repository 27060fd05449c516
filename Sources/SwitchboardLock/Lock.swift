import SwitchboardCore

/// The lock module: named locks per channel of each app, a fair line of waiters for each, a ttl
/// for owners whose connection is lost, and a fencing token for every acquisition.
///
/// It answers `SetLock`, `RemoveLock`, `AcquireLock`, `ReleaseLock`, `RevokeLock`, `GetLocks`
/// (for members of the channel only, and the server's API for `GetLocks` and `RevokeLock`),
/// Storage's `CheckLockHolder` and the server's `LockStatistics`; it keeps channel membership
/// from the bus (`ChannelMembership`: who is in which channel, who hears lock events, who leaves
/// lines and gives locks back; a lock lives until `removeLock`, members or none) and listens to the
/// session events (`SessionSuspended` starts the ttl of the locks a session owns,
/// `SessionResumed` stops it, `SessionClosed` gives them back). Lock pushes go to sessions through
/// the outbox. The state lives in a `LockStore`.
///
/// Over a store that publishes its effects (shared by the nodes of a cluster), the module tells
/// what the relay brings (`DeliverRelayedLocks`) instead of what each call returns: every node
/// then tells one channel's effects in the store's order, whichever node caused them.
public actor Lock: OpeningModule {
    public nonisolated let name = "lock"

    /// How often `run()` looks for ttls that ran out.
    public nonisolated let tickInterval: Duration
    /// Where the locks live.
    public nonisolated let store: any LockStore

    private enum State {
        case idle
        case running(ModuleContext, members: ChannelMembership)
    }
    private var state = State.idle
    private let turns = OneAtATime()
    /// Over a publishing store: per channel, the members here whose snapshot is on its way (nil)
    /// or includes the changes up to a number; a relayed change with a number not above it is
    /// not told to them (their snapshot shows it).
    private var snapshotFloors: [ChannelKey: [SessionID: UInt64?]] = [:]
    /// Over a publishing store: per channel, the locks each session of this node waits for, as
    /// far as this node has told it; after a gap in the relay, each is looked up again, so a
    /// grant (or a removal) that the gap swallowed still reaches its waiter.
    private var waits: [ChannelKey: [SessionID: Set<String>]] = [:]

    /// Creates the module over `store` (in memory by default).
    public init(store: any LockStore = InMemoryLockStore(), tickInterval: Duration = .milliseconds(100)) {
        self.store = store
        self.tickInterval = tickInterval
    }

    public func start(_ context: ModuleContext) async {
        // Lock events go to the members that hear them; every member may call, and every leave
        // gives back what the member held: the others are known, without their details.
        let members = ChannelMembership(keeping: .lock, knowingEveryMember: true)
        state = .running(context, members: members)
        context.bus.subscription()
            .keepingMembership(members) { [self] update in await membershipChanged(update) }
            .on(SessionSuspended.self) { [self] event in await suspended(event.caller.session) }
            .on(SessionResumed.self) { [self] event in await resumed(event.caller.session) }
            .on(SessionTakenOver.self) { [self] event in await takenOver(event) }
            // Answered once the events before each request are handled: a client that subscribed,
            // got its answer and then calls a lock is found in the channel.
            .answer(SetLock.self) { [self] request throws(RtmError) in try await setLock(request) }
            .answer(RemoveLock.self) { [self] request throws(RtmError) in try await removeLock(request) }
            .answer(AcquireLock.self) { [self] request throws(RtmError) in try await acquireLock(request) }
            .answer(ReleaseLock.self) { [self] request throws(RtmError) in try await releaseLock(request) }
            .answer(RevokeLock.self) { [self] request throws(RtmError) in try await revokeLock(request) }
            .answer(GetLocks.self) { [self] request throws(RtmError) in try await getLocks(request) }
            .answer(DeliverRelayedLocks.self) { [self] request in
                await relayed(request)
                return Done()
            }
        context.bus.handle(CheckLockHolder.self) { [self] request throws(RtmError) in try await checkHolder(request) }
        context.bus.handle(LockStatistics.self) { [self] request throws(RtmError) in
            try await inTurn { store, _, _ throws(RtmError) in
                do throws(LockRefusal) {
                    return try await store.counts(in: request.app)
                } catch {
                    throw refusal(error, LockStatistics.operation, "")
                }
            }
        }
    }

    /// Opens the store (a shared one connects); throws what it throws.
    public func open() async throws {
        try await store.open()
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        for await _ in context.clock.ticks(every: tickInterval) {
            await inEventTurn("expiring ttls") { store, context, since throws(LockRefusal) in
                publish(try await store.expire(now: context.clock.wallNow), context, since, expiring: true)
            }
        }
        await store.close()
    }

    // MARK: Requests

    private func setLock(_ request: SetLock) async throws(RtmError) -> Done {
        let operation = SetLock.operation
        let channel = try checkedLock(request.caller, request.lock, operation)
        let limits = try running(operation).context.limits(for: request.caller.app)
        let ttl = request.ttl ?? limits.locks.defaultTTL
        guard limits.locks.ttlRange.contains(ttl) else {
            throw RtmError(
                .invalidParameter, operation: operation,
                reason: "ttl is \(ttl) s; it must be within \(limits.locks.ttlRange.lowerBound)–\(limits.locks.ttlRange.upperBound) s")
        }
        return try await change(operation, request.lock.name, in: channel, by: request.caller) { store, _ throws(LockRefusal) in
            try await store.setLock(
                request.lock.name, in: channel, ttl: ttl, maxLocks: limits.locks.perChannel, maxLocksInApp: limits.locks.perApp)
        }
    }

    private func removeLock(_ request: RemoveLock) async throws(RtmError) -> Done {
        let operation = RemoveLock.operation
        let channel = try checkedLock(request.caller, request.lock, operation)
        return try await change(operation, request.lock.name, in: channel, by: request.caller) { store, _ throws(LockRefusal) in
            try await store.removeLock(request.lock.name, in: channel)
        }
    }

    private func acquireLock(_ request: AcquireLock) async throws(RtmError) -> LockAcquisition {
        let operation = AcquireLock.operation
        let channel = try checkedLock(request.caller, request.lock, operation)
        let ended = try running(operation).members.ended
        // Before any suspension: either this sees the session's end, or its cleanup runs after
        // this acquire in the store's order (see `EndedSessions`).
        guard !ended.contains(request.caller.session) else {
            throw RtmError(.notLogin, operation: operation, reason: "the session has ended")
        }
        if request.retry { try await listenToOtherNodes(for: channel, operation: operation) }
        return try await inChannelTurn(request.caller, channel, operation) { store, context, since throws(RtmError) in
            do throws(LockRefusal) {
                let (acquisition, effects) = try await store.acquireLock(
                    request.lock.name, in: channel, by: request.caller, wait: request.retry, now: context.clock.wallNow)
                publish(effects, context, since)
                if acquisition == .queued, isRelayed { waits[channel, default: [:]][request.caller.session, default: []].insert(request.lock.name) }
                return acquisition
            } catch {
                throw refusal(error, operation, request.lock.name)
            }
        }
    }

    private func releaseLock(_ request: ReleaseLock) async throws(RtmError) -> Done {
        let operation = ReleaseLock.operation
        let channel = try checkedLock(request.caller, request.lock, operation)
        return try await change(operation, request.lock.name, in: channel, by: request.caller) { store, context throws(LockRefusal) in
            try await store.releaseLock(request.lock.name, in: channel, by: request.caller, now: context.clock.wallNow)
        }
    }

    private func revokeLock(_ request: RevokeLock) async throws(RtmError) -> Done {
        let operation = RevokeLock.operation
        let channel = try checkedLock(request.caller, request.lock, operation)
        try Validation.checkUserId(request.userId, limits: try running(operation).context.limits, operation: operation)
        return try await change(operation, request.lock.name, in: channel, by: request.caller, serverMay: true, revoking: true) {
            store, context throws(LockRefusal) in
            try await store.revokeLock(request.lock.name, in: channel, from: request.userId, now: context.clock.wallNow)
        }
    }

    private func getLocks(_ request: GetLocks) async throws(RtmError) -> [LockDetail] {
        let operation = GetLocks.operation
        let channel = try checkedChannel(request.caller, request.channel, operation)
        return try await inChannelTurn(request.caller, channel, operation, serverMay: true) { store, _, _ throws(RtmError) in
            do throws(LockRefusal) {
                return try await store.locks(in: channel)
            } catch {
                throw refusal(error, operation, "")
            }
        }
    }

    private func checkHolder(_ request: CheckLockHolder) async throws(RtmError) -> LockHold {
        let operation = CheckLockHolder.operation
        _ = try running(operation)
        let name = request.lockName
        return try await inTurn { store, _, _ throws(RtmError) in
            let holding: LockHolding?
            do throws(LockRefusal) {
                holding = try await store.holder(of: name, in: request.channel)
            } catch {
                throw refusal(error, operation, name)
            }
            guard let holding, !holding.onAnotherNode, holding.session == request.caller.session else {
                throw RtmError(.lockNotAcquired, operation: operation, reason: "\(request.caller.userId) does not hold \(name)")
            }
            if let token = request.fencingToken, token != holding.fencingToken {
                throw RtmError(
                    .lockNotAcquired, operation: operation,
                    reason: "fencing token \(token) is stale: \(name) was acquired again (token \(holding.fencingToken))")
            }
            return LockHold(fencingToken: holding.fencingToken)
        }
    }

    // MARK: Events

    /// Acts on a change of membership, already applied to the roster.
    private func membershipChanged(_ update: MembershipUpdate) async {
        switch update {
        case .changed(let change) where change.isLeave:
            forgetFloor(of: change.member.session, in: change.channel)
            forgetWaits(of: change.member.session, in: change.channel)
            await left(change)
        case .changed(let change):
            if change.gained(.lock) { await sendSnapshot(to: change.member.session, of: change.channel) }
            if change.lost(.lock) { forgetFloor(of: change.member.session, in: change.channel) }
        case .sessionEnded(let event, let left):
            for change in left {
                forgetFloor(of: event.session, in: change.channel)
                forgetWaits(of: event.session, in: change.channel)
            }
            await sessionClosed(event)
        }
    }

    /// Sends a member that now hears lock events the channel's locks. Operations that began
    /// before it joined do not tell it their effects (`listeners(of:hearing:asOf:)`); this
    /// snapshot, taken after them in the store's order, shows them instead. Over a publishing
    /// store, the relay listens first, and the member hears the relayed changes after its
    /// snapshot's only.
    private func sendSnapshot(to session: SessionID, of channel: ChannelKey) async {
        let relayed = isRelayed
        if relayed {
            snapshotFloors[channel, default: [:]][session] = .some(nil)
            try? await listenToOtherNodes(for: channel, operation: "snapshot")
        }
        await inEventTurn("the lock snapshot of \(channel) for \(session)") { store, context, _ throws(LockRefusal) in
            let snapshot = try await store.snapshot(of: channel)
            if relayed {
                guard snapshotFloors[channel]?.keys.contains(session) == true else { return }
                snapshotFloors[channel]?[session] = snapshot.sequence
            }
            let event = LockEventDelivery(
                channel: channel.address, eventType: .snapshot, locks: snapshot.locks, timestamp: context.clock.wallMilliseconds)
            context.outbox.deliver(.lock(.event(event)), to: [session])
        }
    }

    private func left(_ change: MembershipChange) async {
        let session = change.member.session, channel = change.channel
        await inEventTurn("the leave of \(session) from \(channel)") { store, context, since throws(LockRefusal) in
            publish(try await store.sessionLeft(session, channel: channel, now: context.clock.wallNow), context, since)
        }
    }

    private func suspended(_ session: SessionID) async {
        await inEventTurn("the suspension of \(session)") { store, context, _ throws(LockRefusal) in
            try await store.sessionSuspended(session, now: context.clock.wallNow)
        }
    }

    private func resumed(_ session: SessionID) async {
        await inEventTurn("the resumption of \(session)") { store, _, _ throws(LockRefusal) in try await store.sessionResumed(session) }
    }

    private func takenOver(_ event: SessionTakenOver) async {
        await inEventTurn("the take-over of \(event.caller.session) from \(event.formerNode)") { store, _, _ throws(LockRefusal) in
            try await store.takeOver(event.caller.session, fromNode: event.formerNode)
        }
    }

    private func sessionClosed(_ event: SessionClosed) async {
        await inEventTurn("the end of \(event.session)") { store, context, since throws(LockRefusal) in
            publish(try await store.sessionEnded(event.session, now: context.clock.wallNow), context, since)
        }
    }

    // MARK: Effects

    /// Tells the people concerned what the store did, in the order it did it: lock events go to
    /// the members that heard lock events when the operation began (roster version `since`), and
    /// to the bus as `LockChanged` (`announce`). Over a publishing store with a relay, the members
    /// hear nothing from here: the relay brings the effects, in the store's order (`relayed`); the
    /// bus still hears each change once, from the node whose call made it.
    private func publish(
        _ effects: [LockEffect], _ context: ModuleContext, _ since: UInt64, revoking: Bool = false, expiring: Bool = false
    ) {
        announce(effects, context, revoking: revoking, expiring: expiring)
        guard !isRelayed, let members = try? running("").members else { return }
        tell(effects, context) { channel in members.read { $0.listeners(of: channel, hearing: .lock, asOf: since) } }
    }

    /// Publishes `LockChanged` for each lock event of `effects` when someone listens on the bus
    /// (the webhooks): with `revoking`, the release the store reports first is the revocation; with
    /// `expiring` (the ttl sweep), each release is a lost owner's ttl running out, which clients
    /// hear as `lockReleased` and the bus as `expired`.
    private func announce(_ effects: [LockEffect], _ context: ModuleContext, revoking: Bool, expiring: Bool) {
        guard context.bus.listenerCount(of: LockChanged.self).current > 0 else { return }
        var revocation = revoking
        for case .event(let channel, let type, let detail) in effects {
            guard var change = Self.change(type) else { continue }
            if change == .released && revocation {
                change = .revoked
                revocation = false
            } else if change == .released && expiring {
                change = .expired
            }
            context.bus.publish(LockChanged(channel: channel, change: change, lock: detail))
        }
    }

    /// Delivers `effects`: each event to the sessions `listeners` names for its channel, each
    /// grant and ended wait to its session.
    private func tell(_ effects: [LockEffect], _ context: ModuleContext, listeners: (ChannelKey) -> [SessionID]) {
        for effect in effects {
            switch effect {
            case .event(let channel, let type, let detail):
                let receivers = listeners(channel)
                guard !receivers.isEmpty else { continue }
                let event = LockEventDelivery(
                    channel: channel.address, eventType: type, locks: [detail], timestamp: context.clock.wallMilliseconds)
                context.outbox.deliver(.lock(.event(event)), to: receivers)
            case .granted(let session, let channel, let lockName, let token):
                stopWaiting(session, for: lockName, in: channel)
                let lock = LockAddress(channel.address, lockName)
                context.outbox.deliver(.lock(.granted(lock, fencingToken: token)), to: [session])
            case .waitEnded(let session, let channel, let lockName, let why):
                stopWaiting(session, for: lockName, in: channel)
                let lock = LockAddress(channel.address, lockName)
                let code: RtmErrorCode = why == .lockRemoved ? .lockNotExist : .lockAcquireFailed
                context.outbox.deliver(.lock(.waitFailed(lock, code: code, reason: Self.reason(why, lockName))), to: [session])
            }
        }
    }

    /// The bus's name for a lock event; nil for a snapshot, which changes nothing.
    private static func change(_ type: RtmLockEventType) -> LockChange? {
        switch type {
        case .lockSet: .set
        case .lockRemoved: .removed
        case .lockAcquired: .acquired
        case .lockReleased: .released
        case .lockExpired: .expired
        case .snapshot, .none: nil
        }
    }

    // MARK: Other nodes (over a store that publishes its effects)

    /// True when the store publishes its effects and a relay brings them: the module tells what
    /// the relay brings, and nothing of what its calls return.
    private var isRelayed: Bool {
        guard store.publishesEffects, case .running(let context, _) = state else { return false }
        return context.bus.hasHandler(OpenLockRelay.self)
    }

    /// Makes sure the changes of `channel`'s locks reach this node from now on, when the store
    /// publishes them and a relay exists; its failure is `lockOperationTimeout`.
    private func listenToOtherNodes(for channel: ChannelKey, operation: String) async throws(RtmError) {
        guard isRelayed, case .running(let context, _) = state else { return }
        do {
            _ = try await context.bus.request(OpenLockRelay(channel))
        } catch {
            context.log(.warning, "the lock changes of \(channel) may miss this node: \(error)")
            throw RtmError(.lockOperationTimeout, operation: operation, reason: "cannot listen to the locks of \(channel.name): \(error.reason)")
        }
    }

    /// A change of a channel's locks, from the store through the relay: told to the members here
    /// that hear lock events (but not to those whose snapshot includes it), and its grants and
    /// ended waits to their sessions. After a gap, every member that hears lock events gets the
    /// channel's locks again.
    private func relayed(_ request: DeliverRelayedLocks) async {
        let channel = request.channel
        await inEventTurn("the relayed locks of \(channel)") { store, context, _ throws(LockRefusal) in
            guard let members = try? running("").members else { return }
            switch request.news {
            case .change(let payload):
                guard let change = store.change(publishedAs: payload), change.channel == channel else {
                    context.log(.warning, "skipped an unreadable lock change of \(channel)")
                    return
                }
                let floors = snapshotFloors[channel] ?? [:]
                tell(change.effects, context) { channel in
                    members.read { $0.listeners(of: channel, hearing: .lock) }.filter { session in
                        guard let floor = floors[session] else { return true }
                        return floor.map { $0 < change.sequence } ?? false
                    }
                }
                // A floor below this change's number no longer holds anyone back.
                snapshotFloors[channel] = floors.filter { $0.value.map { $0 >= change.sequence } ?? true }
                if snapshotFloors[channel]?.isEmpty == true { snapshotFloors[channel] = nil }
            case .mayHaveMissedChanges:
                try await lookUpWaits(in: channel, store, context)
                let listeners = members.read { $0.listeners(of: channel, hearing: .lock) }
                guard !listeners.isEmpty else { return }
                let snapshot = try await store.snapshot(of: channel)
                for session in listeners { snapshotFloors[channel, default: [:]][session] = snapshot.sequence }
                let event = LockEventDelivery(
                    channel: channel.address, eventType: .snapshot, locks: snapshot.locks, timestamp: context.clock.wallMilliseconds)
                context.outbox.deliver(.lock(.event(event)), to: listeners)
            }
        }
    }

    /// Each wait of this node in `channel`, looked up again after a gap: a waiter that owns the
    /// lock by now is granted it, one whose lock is gone is told so; the others wait on.
    private func lookUpWaits(in channel: ChannelKey, _ store: any LockStore, _ context: ModuleContext) async throws(LockRefusal) {
        for (session, names) in waits[channel] ?? [:] {
            for name in names.sorted() {
                do throws(LockRefusal) {
                    guard let holding = try await store.holder(of: name, in: channel), !holding.onAnotherNode,
                        holding.session == session
                    else { continue }
                    tell([.granted(session, channel, lockName: name, fencingToken: holding.fencingToken)], context) { _ in [] }
                } catch .notExist {
                    tell([.waitEnded(session, channel, lockName: name, .lockRemoved)], context) { _ in [] }
                }
            }
        }
    }

    private func stopWaiting(_ session: SessionID, for lockName: String, in channel: ChannelKey) {
        waits[channel]?[session]?.remove(lockName)
        if waits[channel]?[session]?.isEmpty == true { waits[channel]?[session] = nil }
        if waits[channel]?.isEmpty == true { waits[channel] = nil }
    }

    /// The session left `channel` (or ended): the store ended its waits there.
    private func forgetWaits(of session: SessionID, in channel: ChannelKey) {
        waits[channel]?[session] = nil
        if waits[channel]?.isEmpty == true { waits[channel] = nil }
    }

    private func forgetFloor(of session: SessionID, in channel: ChannelKey) {
        snapshotFloors[channel]?[session] = nil
        if snapshotFloors[channel]?.isEmpty == true { snapshotFloors[channel] = nil }
    }

    private static func reason(_ why: LockWaitEnd, _ lockName: String) -> String {
        switch why {
        case .lockRemoved: "\(lockName) was removed while waiting for it"
        case .leftChannel: "left the channel while waiting for \(lockName)"
        case .withdrawn: "stopped waiting for \(lockName) with releaseLock"
        }
    }

    // MARK: Helpers

    /// Runs a store operation of a member of the lock's channel that changes locks in its turn,
    /// publishes its effects, and answers its refusal with the reference's code.
    private func change(
        _ operation: String, _ lockName: String, in channel: ChannelKey, by caller: Caller, serverMay: Bool = false,
        revoking: Bool = false, _ body: (any LockStore, ModuleContext) async throws(LockRefusal) -> [LockEffect]
    ) async throws(RtmError) -> Done {
        try await inChannelTurn(caller, channel, operation, serverMay: serverMay) { store, context, since throws(RtmError) in
            do throws(LockRefusal) {
                publish(try await body(store, context), context, since, revoking: revoking)
                return Done()
            } catch {
                throw refusal(error, operation, lockName)
            }
        }
    }

    /// Runs `body` in its turn (`inTurn`) when `caller`'s session is in `channel` then; refuses
    /// otherwise, as the reference does a call on a channel not subscribed (message) or not joined
    /// (stream). Checked in the turn, so a leave handled before it is seen, and a leave handled
    /// after it finds the locks it holds and lines it waits in, and gives them up. With
    /// `serverMay`, the server's own call (its API: listing locks, revoking one) needs no
    /// membership: it holds no lock and waits in no line, so it leaves nothing behind.
    private func inChannelTurn<T>(
        _ caller: Caller, _ channel: ChannelKey, _ operation: String, serverMay: Bool = false,
        _ body: (any LockStore, ModuleContext, _ since: UInt64) async throws(RtmError) -> T
    ) async throws(RtmError) -> T {
        let members = try running(operation).members
        return try await inTurn { store, context, since throws(RtmError) in
            guard (serverMay && caller.isServer) || members.contains(caller.session, in: channel) else {
                throw Self.notMember(channel, operation)
            }
            return try await body(store, context, since)
        }
    }

    /// The reference's refusal of a call on a channel the caller is not in.
    private static func notMember(_ channel: ChannelKey, _ operation: String) -> RtmError {
        channel.type == .stream
            ? RtmError(
                .channelNotJoined, operation: operation,
                reason: "stream channel \(channel.name) is not joined; its locks are for its members")
            : RtmError(
                .channelNotSubscribed, operation: operation,
                reason: "message channel \(channel.name) is not subscribed; its locks are for its members")
    }

    /// Runs an operation nobody waits for the answer of (an event, a tick) in its turn, and logs
    /// its failure: there is no client to tell.
    private func inEventTurn(
        _ what: @autoclosure () -> String, _ body: (any LockStore, ModuleContext, _ since: UInt64) async throws(LockRefusal) -> Void
    ) async {
        do {
            try await inTurn { store, context, since throws(RtmError) in
                do throws(LockRefusal) {
                    try await body(store, context, since)
                } catch {
                    throw refusal(error, "", "")
                }
            }
        } catch {
            guard case .running(let context, _) = state else { return }
            context.log(.error, "\(what()): \(error)")
        }
    }

    /// Runs `body` with the store once every operation that came before has finished, so effects
    /// are published in the order the store applied them; `since` is the roster's version when
    /// the turn began.
    private func inTurn<T>(
        _ body: (any LockStore, ModuleContext, _ since: UInt64) async throws(RtmError) -> T
    ) async throws(RtmError) -> T {
        guard case .running(let context, let members) = state else {
            throw RtmError(.notInitialized, operation: "", reason: "the lock module has not been started")
        }
        return try await turns.run { () async throws(RtmError) in try await body(store, context, members.version) }
    }

    private nonisolated func refusal(_ refusal: LockRefusal, _ operation: String, _ lockName: String) -> RtmError {
        switch refusal {
        case .notExist: RtmError(.lockNotExist, operation: operation, reason: "there is no lock \(lockName)")
        case .alreadyExists: RtmError(.lockAlreadyExist, operation: operation, reason: "\(lockName) exists already")
        case .tooManyLocks(let limit):
            RtmError(.lockOperationFailed, operation: operation, reason: "the channel already has \(limit) locks")
        case .tooManyLocksInApp(let limit):
            RtmError(.lockOperationFailed, operation: operation, reason: "the app already has \(limit) locks in its channels")
        case .heldByOther(let owner):
            RtmError(.lockAcquireFailed, operation: operation, reason: "\(owner) holds \(lockName)")
        case .notOwner(let owner):
            RtmError(
                .lockNotAcquired, operation: operation,
                reason: owner.isEmpty ? "nobody holds \(lockName)" : "\(owner) holds \(lockName)")
        case .alreadyWaiting:
            RtmError(.lockOperationPerforming, operation: operation, reason: "already waiting for \(lockName)")
        case .unavailable(let timedOut, let reason):
            RtmError(timedOut ? .lockOperationTimeout : .lockNotAvailable, operation: operation, reason: reason)
        }
    }

    /// The key of a channel where locks may live, after checking its type and name.
    private func checkedChannel(_ caller: Caller, _ channel: ChannelAddress, _ operation: String) throws(RtmError) -> ChannelKey {
        let context = try running(operation).context
        guard channel.type == .message || channel.type == .stream else {
            throw RtmError(.invalidChannelType, operation: operation, reason: "locks live in message or stream channels")
        }
        try Validation.checkChannelName(channel.name, limits: context.limits, operation: operation)
        return ChannelKey(app: caller.app, channel)
    }

    /// The key of the lock's channel, after checking the channel and the lock's name.
    private func checkedLock(_ caller: Caller, _ lock: LockAddress, _ operation: String) throws(RtmError) -> ChannelKey {
        let channel = try checkedChannel(caller, lock.channel, operation)
        try Validation.checkLockName(lock.name, limits: try running(operation).context.limits(for: caller.app), operation: operation)
        return channel
    }

    private func running(_ operation: String) throws(RtmError) -> (context: ModuleContext, members: ChannelMembership) {
        guard case .running(let context, let members) = state else {
            throw RtmError(.notInitialized, operation: operation, reason: "the lock module has not been started")
        }
        return (context, members)
    }
}
