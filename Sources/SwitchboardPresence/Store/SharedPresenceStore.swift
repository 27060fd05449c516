import SwitchboardCore

/// What a presence store shared by several nodes adds: opening and closing, the acting session and
/// whether a change shows (so the store can publish it for every node), and snapshots numbered in
/// the store's order. Each has a default for a store of one node, which publishes nothing.
extension PresenceStore {
    public func open() async throws {}
    public func close() async {}
    public var publishesChanges: Bool { false }
    public func change(publishedAs payload: [UInt8]) -> PublishedPresenceChange? { nil }
    public func takeOver(_ session: Caller, fromNode node: String) async throws(RtmError) -> [HeldMembership] { [] }
    public func restore() async throws(RtmError) -> Int { 0 }
    public func channelSummaries(in app: AppID) async throws(RtmError) -> [ChannelSummary]? { nil }

    public func leave(_ member: Caller, _ channel: ChannelKey, timedOut: Bool) async throws(RtmError) -> MemberChange? {
        try await leave(member, channel)
    }

    public func setState(
        of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits, by session: SessionID?, shows: Bool
    ) async throws(RtmError) -> StateChange {
        try await setState(of: user, in: channel, items: items, limits: limits)
    }

    public func removeState(
        of user: UserKey, in channel: ChannelKey, keys: [String], by session: SessionID?, shows: Bool
    ) async throws(RtmError) -> StateChange {
        try await removeState(of: user, in: channel, keys: keys)
    }

    public func snapshot(of channel: ChannelKey, limit: Int) async throws(RtmError) -> PresenceSnapshot {
        let page = try await members(of: channel, after: 0, limit: limit, budget: .max, withStates: true)
        return PresenceSnapshot(users: page.users, occupancy: try await occupancy(of: channel), sequence: 0)
    }
}

/// A change of one channel's presence that other members are told of, as a publishing store
/// published it: numbered in the channel's order.
public struct PublishedPresenceChange: Sendable, Hashable {
    /// What the others are told.
    public enum Kind: Int, Sendable, Hashable {
        /// The user's session shows in the channel from now on.
        case joined = 1
        /// It no longer shows: it left, or became quiet.
        case left = 2
        /// It no longer shows: its connection's grace ran out.
        case timedOut = 3
        /// The user's state changed.
        case stateChanged = 4
    }

    /// The channel.
    public var channel: ChannelKey
    /// The change's number in the channel's order (numbers grow; not every number is a change told).
    public var sequence: UInt64
    /// What happened.
    public var kind: Kind
    /// The user.
    public var user: UserID
    /// The user's whole state after the change.
    public var states: [String: String]
    /// For a join or leave: no other session of the user shows in the channel.
    public var firstOrLast: Bool
    /// How many users show in the channel after the change.
    public var occupancy: Int
    /// The session of this node that made the change, which is not told it; nil when another
    /// node's (or the server's).
    public var except: SessionID?

    /// Creates a change.
    public init(
        channel: ChannelKey, sequence: UInt64, kind: Kind, user: UserID, states: [String: String], firstOrLast: Bool,
        occupancy: Int, except: SessionID?
    ) {
        self.channel = channel
        self.sequence = sequence
        self.kind = kind
        self.user = user
        self.states = states
        self.firstOrLast = firstOrLast
        self.occupancy = occupancy
        self.except = except
    }
}

/// What a new listener of a channel is shown first.
public struct PresenceSnapshot: Sendable, Hashable {
    /// The visible members, in join order, with their states (at most as many as asked).
    public var users: [UserState]
    /// How many users show.
    public var occupancy: Int
    /// The number of the last published change it includes (0: a store that does not publish).
    public var sequence: UInt64
    /// Creates a snapshot.
    public init(users: [UserState], occupancy: Int, sequence: UInt64) {
        self.users = users
        self.occupancy = occupancy
        self.sequence = sequence
    }
}
