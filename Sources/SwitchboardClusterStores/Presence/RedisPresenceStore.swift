import Synchronization
import SwitchboardCluster
import SwitchboardCore
import SwitchboardPresence
import SwitchboardRedis
import SwitchboardWire

/// Presence in the cluster's Redis, shared by every node: one Lua script per atomic operation
/// (`PresenceScripts`) runs the rules of the in-memory `PresenceTable`, and publishes each change
/// the members are told of, numbered per channel, for the nodes whose members listen.
///
/// - Sessions: a session id means something only on its node (each node numbers its own), so a
///   member is `node:session`; the listeners it answers are this node's.
/// - Order: a channel's roster is scored by the number of the change that showed each user, so
///   `whoNow` pages by join order, and a page token never names a place in an earlier life of
///   the channel (numbers are never reused).
/// - A dead node's sessions (or this node's earlier run's, reaped by the cluster link as it
///   starts) lose their connection at its last beat (`reapSessions`) and wait for a take-over;
///   untaken, each times out of every channel, told to the members on every node (`endOrphan`);
///   `endSessions(ofNode:)` ends all of a node's at once (a node's id must be unique).
public final class RedisPresenceStore: PresenceStore, DeadNodeStep {
    /// The Redis every node shares.
    public let configuration: RedisConfiguration
    /// This node's id in the cluster.
    public let nodeID: String
    /// How long a user's last-seen time is kept once they are offline.
    public let lastSeenTTL: Duration
    /// This node's sessions as the store records them.
    private let sessions: NodeSessions
    private let line = RedisLine()
    /// What this node's sessions hold here, written back by `restore()` when Redis lost it.
    private let share = Mutex(PresenceShare())

    /// The store of node `nodeID` on the cluster's Redis of `configuration`; it connects in `open`.
    public init(configuration: RedisConfiguration, nodeID: String, lastSeenTTL: Duration = .seconds(30 * 24 * 3600)) {
        self.configuration = configuration
        self.nodeID = nodeID
        self.lastSeenTTL = lastSeenTTL
        sessions = NodeSessions(nodeID: nodeID)
    }

    /// True while the connection to Redis is up.
    public var isConnected: Bool { line.isConnected }

    public func open() async throws {
        try await line.open(configuration, keeping: "presence") {
            PresenceStoreStartupError(description: $0)
        }
    }

    public func close() async { await line.close() }

    public var publishesChanges: Bool { true }

    /// Ends every session of node `nodeID` (this node's earlier run, or a node found dead): each
    /// leaves every channel as timed out, which the members there are told, and goes offline at
    /// `now`. Returns how many sessions it ended. Idempotent: a second call finds none.
    public func endSessions(ofNode nodeID: String, now: WallClockTime) async throws(RtmError) -> Int {
        try await end(ofNode: nodeID, now: now).sessions
    }

    /// Ends every session of node `nodeID` as `endSessions` does; returns how many, and each
    /// channel membership ended, in the order they ended.
    private func end(ofNode nodeID: String, now: WallClockTime) async throws(RtmError) -> (sessions: Int, left: [ChannelMemberTimedOut]) {
        try await end(prefix: KeyPart.escaped(nodeID) + ":", now: now)
    }

    /// Ends the sessions whose ids `prefix` names (`node:` for a node's, or one `node:session`),
    /// as `endSessions` does.
    private func end(prefix: String, now: WallClockTime) async throws(RtmError) -> (sessions: Int, left: [ChannelMemberTimedOut]) {
        let reply = try await run(PresenceScripts.end, [prefix, String(now.millisecondsSince1970), keep], "endSessions")
        guard let parts = reply.elements, parts.count == 2, let ended = parts[0].integer, let flat = parts[1].elements
        else { throw Self.unexpected(reply, "endSessions") }
        var left: [ChannelMemberTimedOut] = []
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let tag = flat[index].string, let channel = PresenceKeys.channel(ofTag: Substring(tag)), let user = flat[index + 1].string
            else { continue }
            left.append(ChannelMemberTimedOut(channel: channel, userId: user))
        }
        return (Int(ended), left)
    }

    /// The reaper's step: the dead node's sessions lost their connection at its last beat; they
    /// stay in their channels, for another node to take over, until each one's presence timeout
    /// (`endOrphan`).
    public func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions {
        _ = try await run(PresenceScripts.lose, [KeyPart.escaped(node) + ":", String(lastBeat.millisecondsSince1970)], "reapSessions")
        return ReapedSessions()
    }

    /// A dead node's session that no node took over times out of every channel (the members are
    /// told, on every node) and goes offline; each membership ended is reported once, for the
    /// webhooks of the node that ends it.
    public func endOrphan(_ session: SessionID, ofNode node: String) async throws -> ReapedSessions {
        ReapedSessions(timedOut: try await end(prefix: NodeSessions.id(session, ofNode: node), now: SystemClock().wallNow).left)
    }

    /// What is left of a dead node's sessions times out, reported as `endOrphan`'s.
    public func endLeftovers(ofNode node: String) async throws -> ReapedSessions {
        ReapedSessions(timedOut: try await end(ofNode: node, now: SystemClock().wallNow).left)
    }

    /// Renames every membership of the session from the former node's name to this node's, with
    /// its listening and its user's online mark, in one script; nobody is told.
    public func takeOver(_ session: Caller, fromNode node: String) async throws(RtmError) -> [HeldMembership] {
        let reply = try await run(
            PresenceScripts.takeOver, [NodeSessions.id(session.session, ofNode: node), id(session.session)], TakeOverMemberships.operation)
        guard let parts = reply.elements, parts.count % 3 == 0 else { throw Self.unexpected(reply, TakeOverMemberships.operation) }
        let held = stride(from: 0, to: parts.count, by: 3).compactMap { index -> (HeldMembership, [String: String])? in
            guard let tag = parts[index].string, let channel = PresenceKeys.channel(ofTag: Substring(tag)),
                let features = parts[index + 1].integer, let states = Self.states(parts[index + 2])
            else { return nil }
            return (HeldMembership(channel: channel, features: ChannelFeatures(rawValue: UInt8(truncatingIfNeeded: features))), states)
        }
        share.withLock { share in
            for (membership, states) in held { share.joined(session, membership.channel, features: membership.features, states: states) }
        }
        return held.map(\.0)
    }

    /// Writes back what this node's sessions held here and Redis no longer holds (it restarted
    /// with nothing kept): each membership joins again, told to the members as a join, with its
    /// user's state as this node last knew it, and each session is marked online again. One
    /// script per hundred memberships; what Redis still holds is left as it is. Returns how many
    /// memberships were written back.
    public func restore() async throws(RtmError) -> Int {
        try await WriteBack.inBatches(share.withLock { $0.held }) { entry in
            let features = entry.features
            return [
                tag(entry.channel), PresenceKeys.tag(of: entry.member.user), id(entry.member.session), entry.member.userId,
                String(features.rawValue), features.isVisible ? "1" : "0", features.contains(.presence) ? "1" : "0",
            ].map { Array($0.utf8) } + [WriteBack.packed(entry.states)]
        } run: { arguments throws(RtmError) in
            let reply = try await call("restore") { client throws(RedisError) in
                try await client.run(PresenceScripts.restore, keys: [], arguments: arguments)
            }
            guard let count = reply.integer else { throw Self.unexpected(reply, "restore") }
            return Int(count)
        }
    }

    // MARK: Membership

    public func join(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures) async throws(RtmError) -> MemberChange {
        let reply: RESPValue
        do {
            reply = try await run(
                PresenceScripts.join,
                [
                    tag(channel), PresenceKeys.tag(of: member.user), id(member.session), member.userId, String(features.rawValue),
                    features.isVisible ? "1" : "0", features.contains(.presence) ? "1" : "0",
                ], "join")
        } catch {
            // Kept as this node's all the same: a write-back (`restore`) makes the join once Redis
            // takes it (it skips a session no longer this node's, and a membership Redis has).
            share.withLock { $0.joined(member, channel, features: features, states: $0.states(of: member.userId, in: channel)) }
            throw error
        }
        guard let parts = reply.elements, parts.count == 4, let before = parts[0].integer, let others = parts[1].integer,
            let occupancy = parts[2].integer, let states = Self.states(parts[3])
        else { throw Self.unexpected(reply, "join") }
        share.withLock { $0.joined(member, channel, features: features, states: states) }
        return MemberChange(
            user: member.userId, before: before < 0 ? nil : ChannelFeatures(rawValue: UInt8(truncatingIfNeeded: before)),
            after: features, otherVisibleSessions: Int(others), states: states, occupancy: Int(occupancy))
    }

    public func leave(_ member: Caller, _ channel: ChannelKey) async throws(RtmError) -> MemberChange? {
        try await leave(member, channel, timedOut: false)
    }

    public func leave(_ member: Caller, _ channel: ChannelKey, timedOut: Bool) async throws(RtmError) -> MemberChange? {
        // Gone from this node whatever Redis answers: nothing of it is written back.
        share.withLock { $0.left(member.session, channel) }
        let reply = try await run(PresenceScripts.leave, [tag(channel), id(member.session), timedOut ? "1" : "0"], "leave")
        guard let parts = reply.elements, let found = parts.first?.integer else { throw Self.unexpected(reply, "leave") }
        guard found == 1 else { return nil }
        guard parts.count == 6, let before = parts[1].integer, let others = parts[2].integer, let occupancy = parts[3].integer,
            let states = Self.states(parts[4]), let user = parts[5].string
        else { throw Self.unexpected(reply, "leave") }
        return MemberChange(
            user: user, before: ChannelFeatures(rawValue: UInt8(truncatingIfNeeded: before)), after: nil,
            otherVisibleSessions: Int(others), states: states, occupancy: Int(occupancy))
    }

    // MARK: States

    public func setState(
        of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits
    ) async throws(RtmError) -> StateChange {
        try await setState(of: user, in: channel, items: items, limits: limits, by: nil, shows: false)
    }

    public func setState(
        of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits, by session: SessionID?, shows: Bool
    ) async throws(RtmError) -> StateChange {
        let operation = SetPresenceState.operation
        var arguments = [
            tag(channel), session.map(id) ?? "", shows ? "1" : "0", String(limits.presence.statesPerUser),
            String(limits.presence.stateMaxBytes), user.userId,
        ]
        for item in items { arguments += [item.key, item.value] }
        let reply = try await run(PresenceScripts.setState, arguments, operation)
        return try kept(stateChange(reply, of: user, in: channel, operation, limits: limits), of: user, in: channel)
    }

    /// Notes `change`'s state as the user's in `channel`, for `restore`; returns it.
    private func kept(_ change: StateChange, of user: UserKey, in channel: ChannelKey) -> StateChange {
        share.withLock { $0.stateChanged(of: user.userId, in: channel, to: change.states) }
        return change
    }

    public func removeState(of user: UserKey, in channel: ChannelKey, keys: [String]) async throws(RtmError) -> StateChange {
        try await removeState(of: user, in: channel, keys: keys, by: nil, shows: false)
    }

    public func removeState(
        of user: UserKey, in channel: ChannelKey, keys: [String], by session: SessionID?, shows: Bool
    ) async throws(RtmError) -> StateChange {
        let operation = RemovePresenceState.operation
        let reply = try await run(
            PresenceScripts.removeState, [tag(channel), session.map(id) ?? "", shows ? "1" : "0", user.userId] + keys, operation)
        return try kept(stateChange(reply, of: user, in: channel, operation, limits: Limits()), of: user, in: channel)
    }

    public func state(of user: UserKey, in channel: ChannelKey) async throws(RtmError) -> MemberState? {
        let reply = try await run(PresenceScripts.state, [tag(channel), user.userId], GetPresenceState.operation)
        guard let parts = reply.elements, let found = parts.first?.integer else { throw Self.unexpected(reply, GetPresenceState.operation) }
        guard found == 1 else { return nil }
        guard parts.count == 3, let visible = parts[1].integer, let states = Self.states(parts[2]) else {
            throw Self.unexpected(reply, GetPresenceState.operation)
        }
        return MemberState(visible: visible == 1, states: states)
    }

    // MARK: Queries

    public func members(
        of channel: ChannelKey, after cursor: UInt64, limit: Int, budget: Int, withStates: Bool
    ) async throws(RtmError) -> MemberPage {
        guard limit > 0 else { return MemberPage(users: [], next: nil) }
        let reply = try await run(
            PresenceScripts.members, [tag(channel), String(cursor), String(limit), withStates ? "1" : "0"], WhoNow.operation)
        guard let entries = Self.roster(reply) else { throw Self.unexpected(reply, WhoNow.operation) }
        // The in-memory table's walk: stop at `limit` users, or before the one past the budget.
        var users: [UserState] = []
        var spent = 0
        var last = cursor
        for (seq, entry) in entries {
            let cost = entry.approximateSize
            if users.count == limit || (!users.isEmpty && spent + cost > budget) { return MemberPage(users: users, next: last) }
            users.append(entry)
            spent += cost
            last = seq
        }
        return MemberPage(users: users, next: nil)
    }

    public func snapshot(of channel: ChannelKey, limit: Int) async throws(RtmError) -> PresenceSnapshot {
        let reply = try await run(PresenceScripts.snapshot, [tag(channel), String(max(0, limit))], "snapshot")
        guard let parts = reply.elements, parts.count == 3, let sequence = parts[0].integer, let occupancy = parts[1].integer,
            let entries = Self.roster(parts[2])
        else { throw Self.unexpected(reply, "snapshot") }
        return PresenceSnapshot(users: entries.map(\.1), occupancy: Int(occupancy), sequence: UInt64(sequence))
    }

    public func occupancy(of channel: ChannelKey) async throws(RtmError) -> Int {
        let reply = try await send(["ZCARD", key(channel, "r")], WhoNow.operation)
        guard let count = reply.integer else { throw Self.unexpected(reply, WhoNow.operation) }
        return Int(count)
    }

    public func listeners(of channel: ChannelKey) async throws(RtmError) -> [SessionID] {
        let reply = try await send(["SMEMBERS", key(channel, "l")], "listeners")
        guard let ids = reply.elements else { throw Self.unexpected(reply, "listeners") }
        return ids.compactMap { $0.string.flatMap(session(of:)) }.sorted()
    }

    public func visibleChannels(of user: UserKey) async throws(RtmError) -> [ChannelKey] {
        let reply = try await send(["SMEMBERS", "sb:p:{\(PresenceKeys.tag(of: user))}:in"], WhereNow.operation)
        guard let tags = reply.elements else { throw Self.unexpected(reply, WhereNow.operation) }
        return tags.compactMap { $0.string.flatMap { PresenceKeys.channel(ofTag: Substring($0)) } }
            .sorted { ($0.type.rawValue, $0.name) < ($1.type.rawValue, $1.name) }
    }

    /// Every channel of `app` with a member on some node, from the store's index of channels
    /// (one script: the app's channels and two counts each).
    public func channelSummaries(in app: AppID) async throws(RtmError) -> [ChannelSummary]? {
        let operation = ListChannels.operation
        let reply = try await run(PresenceScripts.channelCounts, [KeyPart.escaped(app) + ":"], operation)
        guard let flat = reply.elements, flat.count % 3 == 0 else { throw Self.unexpected(reply, operation) }
        return stride(from: 0, to: flat.count, by: 3).compactMap { at in
            guard let tag = flat[at].string, let channel = PresenceKeys.channel(ofTag: Substring(tag)), channel.app == app,
                let members = flat[at + 1].integer, let users = flat[at + 2].integer
            else { return nil }
            return ChannelSummary(channel: channel.address, members: Int(members), users: Int(users))
        }
    }

    // MARK: Users

    public func record(_ sighting: Sighting, of session: Caller, at: WallClockTime) async throws(RtmError) {
        let name: String =
            switch sighting {
            case .opened: "opened"
            case .suspended: "suspended"
            case .resumed: "resumed"
            case .closed: "closed"
            }
        _ = try await run(
            PresenceScripts.record,
            [PresenceKeys.tag(of: session.user), id(session.session), name, String(at.millisecondsSince1970), keep], "record")
    }

    public func presence(of users: [UserKey], now: WallClockTime) async throws(RtmError) -> [UserPresence] {
        guard !users.isEmpty else { return [] }
        let operation = GetUserPresence.operation
        let reply = try await run(
            PresenceScripts.presence, [String(now.millisecondsSince1970)] + users.map { PresenceKeys.tag(of: $0) }, operation)
        guard let values = reply.elements?.compactMap(\.integer), values.count == users.count * 2 else {
            throw Self.unexpected(reply, operation)
        }
        return users.enumerated().map { index, user in
            UserPresence(userId: user.userId, online: values[index * 2] == 1, lastSeen: UInt64(max(0, values[index * 2 + 1])))
        }
    }

    // MARK: Published changes

    /// A published change, `[tag, seq, kind, id, user, states, firstOrLast, occupancy]`
    /// (`PresenceScripts`), with the session that made it when it is this node's.
    public func change(publishedAs payload: [UInt8]) -> PublishedPresenceChange? {
        var reader = MessagePackReader(payload)
        do {
            guard try reader.readArrayHeader() == 8, let channel = PresenceKeys.channel(ofTag: Substring(try reader.readString())) else {
                return nil
            }
            let sequence = try reader.readInteger(UInt64.self)
            guard let kind = PublishedPresenceChange.Kind(rawValue: try reader.readInteger(Int.self)) else { return nil }
            let maker = try reader.readString()
            let user = try reader.readString()
            let count = try reader.readArrayHeader()
            guard count % 2 == 0 else { return nil }
            var states: [String: String] = [:]
            for _ in 0..<(count / 2) {
                let name = try reader.readString()
                states[name] = try reader.readString()
            }
            let firstOrLast = try reader.readInteger(Int.self) == 1
            let occupancy = try reader.readInteger(Int.self)
            guard reader.isAtEnd else { return nil }
            if kind == .stateChanged { share.withLock { $0.stateChanged(of: user, in: channel, to: states) } }
            return PublishedPresenceChange(
                channel: channel, sequence: sequence, kind: kind, user: user, states: states, firstOrLast: firstOrLast,
                occupancy: occupancy, except: session(of: maker))
        } catch {
            return nil
        }
    }

    // MARK: Steps

    /// `lastSeenTTL` in milliseconds, as the scripts take it.
    private var keep: String {
        let (seconds, attoseconds) = lastSeenTTL.components
        return String(max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    private func tag(_ channel: ChannelKey) -> String { PresenceKeys(channel).tag }

    private func key(_ channel: ChannelKey, _ what: String) -> String { "sb:p:{\(tag(channel))}:\(what)" }

    /// `node:session`: a session as the store records it.
    private func id(_ session: SessionID) -> String { sessions.id(session) }

    /// The session of this node that `id` names; nil for another node's.
    private func session(of id: String) -> SessionID? { sessions.session(of: id) }

    /// `{1, changed, states}` as a state change; a refusal as the in-memory table words it.
    private func stateChange(
        _ reply: RESPValue, of user: UserKey, in channel: ChannelKey, _ operation: String, limits: Limits
    ) throws(RtmError) -> StateChange {
        guard let parts = reply.elements, parts.count == 3, let status = parts[0].integer else { throw Self.unexpected(reply, operation) }
        guard status == 1 else {
            let number = parts[2].integer ?? 0
            switch parts[1].string {
            case "notMember":
                throw RtmError(
                    channel.type == .stream ? .channelNotJoined : .channelNotSubscribed, operation: operation,
                    reason: "\(user.userId) is not in \(channel.type) channel \(channel.name)")
            case "count":
                throw RtmError(
                    .presenceStateCountOverflow, operation: operation,
                    reason: "the state would have \(number) keys; at most \(limits.presence.statesPerUser)")
            case "bytes":
                throw RtmError(
                    .presenceStateValueSizeOverflow, operation: operation,
                    reason: "the state would take \(number) bytes; at most \(limits.presence.stateMaxBytes)")
            default:
                throw Self.unexpected(reply, operation)
            }
        }
        guard let changed = parts[1].integer, let states = Self.states(parts[2]) else { throw Self.unexpected(reply, operation) }
        return StateChange(changed: changed == 1, states: states)
    }

    /// A state sent as key, value, …
    private static func states(_ value: RESPValue) -> [String: String]? {
        guard let flat = value.elements, flat.count % 2 == 0 else { return nil }
        var states: [String: String] = [:]
        for at in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[at].string, let text = flat[at + 1].string else { return nil }
            states[name] = text
        }
        return states
    }

    /// Roster entries sent as user, number, states, …
    private static func roster(_ value: RESPValue) -> [(UInt64, UserState)]? {
        guard let flat = value.elements, flat.count % 3 == 0 else { return nil }
        var entries: [(UInt64, UserState)] = []
        for at in stride(from: 0, to: flat.count, by: 3) {
            guard let user = flat[at].string, let score = flat[at + 1].string.flatMap({ Double($0) }),
                let states = states(flat[at + 2])
            else { return nil }
            entries.append((UInt64(score), UserState(userId: user, states: states)))
        }
        return entries
    }

    private func run(_ script: RedisScript, _ arguments: [String], _ operation: String) async throws(RtmError) -> RESPValue {
        try await call(operation) { client throws(RedisError) in
            try await client.run(script, keys: [], arguments: arguments.map { Array($0.utf8) })
        }
    }

    private func send(_ command: [String], _ operation: String) async throws(RtmError) -> RESPValue {
        try await call(operation) { client throws(RedisError) in try await client.send(command) }
    }

    /// Calls Redis with the connected client; its failures as `presenceNotConnected`.
    private func call<T>(_ operation: String, _ body: (RedisClient) async throws(RedisError) -> T) async throws(RtmError) -> T {
        do {
            return try await body(try line.client())
        } catch {
            switch error {
            case .timedOut, .connectionLost:
                throw RtmError(
                    .presenceNotConnected, operation: operation,
                    reason: "the cluster's Redis did not answer; it may or may not have been carried out: \(error)")
            default:
                throw RtmError(.presenceNotConnected, operation: operation, reason: "the cluster's Redis cannot take it: \(error)")
            }
        }
    }

    private static func unexpected(_ reply: RESPValue, _ operation: String) -> RtmError {
        RtmError(.presenceNotConnected, operation: operation, reason: "an unexpected reply from Redis: \(reply)")
    }
}

/// The Redis presence store could not start; the message names the Redis and what failed.
public struct PresenceStoreStartupError: Error, CustomStringConvertible {
    public let description: String
}
