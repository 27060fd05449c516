import SwitchboardCore

/// The pure state behind `InMemoryPresenceStore`: memberships per channel, the
/// users' states, the rosters and the user-level sightings, keyed by app.
///
/// Joins, leaves and state changes cost O(1) (amortized) whatever the channel's size; nothing here
/// copies a channel's member set. Channels are changed in place through `withChannel`.
struct PresenceTable: Sendable {
    private struct Member: Sendable {
        let user: UserID
        var features: ChannelFeatures
        /// The member's index in the channel's `listeners` while it hears presence events.
        var listenerIndex: Int32 = -1
    }

    private struct ChannelUser: Sendable {
        var sessions: Int32 = 0
        var visibleSessions: Int32 = 0
        /// The user's slot in the channel's roster while it shows there.
        var rosterSlot: Int32 = -1
        var states: [String: String] = [:]
    }

    /// One channel. Its tables are compact dictionaries (most channels have one member), and
    /// the listeners' and the roster's indexes live in the member and user entries, so a channel
    /// with one member allocates only its roster.
    private struct Channel: Sendable {
        var members: CompactDictionary<SessionID, Member> = [:]
        var users: CompactDictionary<UserID, ChannelUser> = [:]
        /// The sessions that hear presence events, in no particular order, for the fan-out.
        var listeners: [SessionID] = []
        var roster = Roster()

        /// `session`, a member, hears presence events from now on.
        mutating func listen(_ session: SessionID) {
            guard let member = members[session], member.listenerIndex < 0 else { return }
            members[session]?.listenerIndex = Int32(listeners.count)
            listeners.append(session)
        }

        /// `session`, a member, no longer hears presence events: the last listener takes its place.
        mutating func stopListening(_ session: SessionID) {
            guard let index = members[session]?.listenerIndex, index >= 0 else { return }
            members[session]?.listenerIndex = -1
            let last = listeners.removeLast()
            guard Int(index) < listeners.count else { return }
            listeners[Int(index)] = last
            members[last]?.listenerIndex = index
        }

        /// `user`, in `users`, shows at the end of the roster from now on.
        mutating func show(_ user: UserID, seq: UInt64) {
            guard let entry = users[user], entry.rosterSlot < 0 else { return }
            users[user]?.rosterSlot = Int32(roster.append(user, seq: seq))
        }

        /// The user at roster slot `slot` no longer shows.
        mutating func hide(slot: Int32) {
            guard slot >= 0 else { return }
            for (moved, newSlot) in roster.remove(at: Int(slot)) { users[moved]?.rosterSlot = Int32(newSlot) }
        }
    }

    private var channels: [ChannelKey: Channel] = [:]
    private var shownIn: [UserKey: CompactSet<ChannelKey>] = [:]
    /// Roster sequence numbers: one counter for every channel, so a page token never means a
    /// place in an earlier life of the same channel.
    private var nextSeq: UInt64 = 1
    private var sightings: UserSightings

    init(lastSeenCapacity: Int) {
        sightings = UserSightings(capacity: lastSeenCapacity)
    }

    // MARK: Membership

    mutating func join(_ member: Caller, _ key: ChannelKey, features: ChannelFeatures) -> MemberChange {
        let user = member.userId
        let seq = nextSeq
        var appeared = false
        var disappeared = false
        let change = withChannel(key) { channel -> MemberChange in
            let before = channel.members[member.session]?.features
            channel.members[member.session, default: Member(user: user, features: features)].features = features
            let wasVisible = before?.isVisible ?? false
            let others = Int(channel.users[user]?.visibleSessions ?? 0) - (wasVisible ? 1 : 0)
            if before == nil { channel.users[user, default: ChannelUser()].sessions += 1 }
            if wasVisible != features.isVisible {
                channel.users[user, default: ChannelUser()].visibleSessions += features.isVisible ? 1 : -1
                if features.isVisible && others == 0 {
                    channel.show(user, seq: seq)
                    appeared = true
                } else if !features.isVisible && others == 0 {
                    let slot = channel.users[user]?.rosterSlot ?? -1
                    channel.users[user]?.rosterSlot = -1
                    channel.hide(slot: slot)
                    disappeared = true
                }
            }
            if features.contains(.presence) {
                channel.listen(member.session)
            } else {
                channel.stopListening(member.session)
            }
            return MemberChange(
                user: user, before: before, after: features, otherVisibleSessions: others,
                states: channel.users[user]?.states ?? [:], occupancy: channel.roster.count)
        }
        if appeared {
            nextSeq += 1
            shownIn[member.user, default: []].insert(key)
        }
        if disappeared { hide(member.user, from: key) }
        return change
    }

    mutating func leave(_ member: Caller, _ key: ChannelKey) -> MemberChange? {
        guard let gone = channels[key]?.members[member.session] else { return nil }
        let user = gone.user
        var disappeared = false
        let change = withChannel(key) { channel -> MemberChange in
            channel.stopListening(member.session)
            channel.members[member.session] = nil
            let entry = channel.users[user] ?? ChannelUser()
            let others = Int(entry.visibleSessions) - (gone.features.isVisible ? 1 : 0)
            if entry.sessions <= 1 {
                channel.users[user] = nil
            } else {
                channel.users[user]?.sessions -= 1
                channel.users[user]?.visibleSessions = Int32(others)
            }
            if gone.features.isVisible && others == 0 {
                channel.users[user]?.rosterSlot = -1
                channel.hide(slot: entry.rosterSlot)
                disappeared = true
            }
            return MemberChange(
                user: user, before: gone.features, after: nil, otherVisibleSessions: others,
                states: channel.users[user]?.states ?? [:], occupancy: channel.roster.count)
        }
        if disappeared { hide(UserKey(key.app, user), from: key) }
        return change
    }

    // MARK: States

    mutating func setState(
        of user: UserKey, in key: ChannelKey, items: [StateItem], limits: Limits
    ) throws(RtmError) -> StateChange {
        guard var states = channels[key]?.users[user.userId]?.states else { throw notMember(user, key, SetPresenceState.operation) }
        var changed = false
        for item in items where states[item.key] != item.value {
            states[item.key] = item.value
            changed = true
        }
        try Validation.checkWholeState(states, limits: limits, operation: SetPresenceState.operation)
        if changed { channels[key]?.users[user.userId]?.states = states }
        return StateChange(changed: changed, states: states)
    }

    mutating func removeState(of user: UserKey, in key: ChannelKey, keys: [String]) throws(RtmError) -> StateChange {
        guard channels[key]?.users[user.userId] != nil else { throw notMember(user, key, RemovePresenceState.operation) }
        return withChannel(key) { channel in
            let before = channel.users[user.userId]?.states.count ?? 0
            if keys.isEmpty {
                channel.users[user.userId]?.states.removeAll()
            } else {
                for name in keys { channel.users[user.userId]?.states[name] = nil }
            }
            let states = channel.users[user.userId]?.states ?? [:]
            return StateChange(changed: states.count != before, states: states)
        }
    }

    func state(of user: UserKey, in key: ChannelKey) -> MemberState? {
        guard let entry = channels[key]?.users[user.userId] else { return nil }
        return MemberState(visible: entry.visibleSessions > 0, states: entry.states)
    }

    // MARK: Queries

    func members(of key: ChannelKey, after cursor: UInt64, limit: Int, budget: Int, withStates: Bool) -> MemberPage {
        guard let channel = channels[key], limit > 0 else { return MemberPage(users: [], next: nil) }
        var users: [UserState] = []
        var spent = 0
        var last: UInt64 = cursor
        for (seq, user) in channel.roster.users(after: cursor) {
            let entry = UserState(userId: user, states: withStates ? channel.users[user]?.states ?? [:] : [:])
            let cost = entry.approximateSize
            if users.count == limit || (!users.isEmpty && spent + cost > budget) {
                return MemberPage(users: users, next: last)
            }
            users.append(entry)
            spent += cost
            last = seq
        }
        return MemberPage(users: users, next: nil)
    }

    func occupancy(of key: ChannelKey) -> Int { channels[key]?.roster.count ?? 0 }

    func listeners(of key: ChannelKey) -> [SessionID] { channels[key]?.listeners ?? [] }

    func visibleChannels(of user: UserKey) -> [ChannelKey] {
        (shownIn[user] ?? []).sorted { ($0.type.rawValue, $0.name) < ($1.type.rawValue, $1.name) }
    }

    // MARK: Users

    mutating func record(_ sighting: Sighting, of session: Caller, at: WallClockTime) {
        sightings.record(sighting, of: session, at: at)
    }

    func presence(of users: [UserKey], now: WallClockTime) -> [UserPresence] {
        users.map { sightings.presence(of: $0, now: now) }
    }

    // MARK: Helpers

    /// Changes the channel `key` in place (no copy of its tables), creating it if needed and
    /// dropping it when it ends up with no member.
    private mutating func withChannel<T>(_ key: ChannelKey, _ change: (inout Channel) -> T) -> T {
        let result = change(&channels[key, default: Channel()])
        if channels[key]?.members.isEmpty == true { channels[key] = nil }
        return result
    }

    private mutating func hide(_ user: UserKey, from key: ChannelKey) {
        shownIn.remove(key, fromSetAt: user)
    }

    private func notMember(_ user: UserKey, _ key: ChannelKey, _ operation: String) -> RtmError {
        RtmError(
            key.type == .stream ? .channelNotJoined : .channelNotSubscribed, operation: operation,
            reason: "\(user.userId) is not in \(key.type) channel \(key.name)")
    }
}
