import SwitchboardCore

/// Where presence lives: who is in which channel with which features, the users' temporary
/// states, and which users are online. Every table is keyed by app.
///
/// Each method is one atomic step that reports what it did, so the event logic (`Presence`)
/// decides what to announce from the answer alone. `InMemoryPresenceStore` is the built-in one; a
/// shared store (Redis, for several nodes) implements the same methods. `Presence` runs one
/// operation at a time, so a store whose calls suspend still sees them in order.
public protocol PresenceStore: Sendable {
    /// `member` joined `channel` with `features`, or joined again with new ones.
    func join(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures) async throws(RtmError) -> MemberChange
    /// `member` left `channel`; nil when it was not in it. The user's state is cleared when this
    /// was its last session there.
    func leave(_ member: Caller, _ channel: ChannelKey) async throws(RtmError) -> MemberChange?
    /// Merges `items` into the state of `user` in `channel` (the user must be in it). Throws
    /// `presenceStateCountOverflow` past `limits.presence.statesPerUser` keys and
    /// `presenceStateValueSizeOverflow` past `limits.presence.stateMaxBytes`, changing nothing.
    func setState(
        of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits
    ) async throws(RtmError) -> StateChange
    /// Removes `keys` (every key when empty) from the state of `user` in `channel`.
    func removeState(of user: UserKey, in channel: ChannelKey, keys: [String]) async throws(RtmError) -> StateChange
    /// The state of `user` in `channel` and whether the user shows there; nil when not in it.
    func state(of user: UserKey, in channel: ChannelKey) async throws(RtmError) -> MemberState?
    /// Visible members of `channel` in join order, from just after `cursor` (0: the first), at most
    /// `limit` of them and about `budget` bytes (at least one), with their states if `withStates`.
    func members(
        of channel: ChannelKey, after cursor: UInt64, limit: Int, budget: Int, withStates: Bool
    ) async throws(RtmError) -> MemberPage
    /// How many users show in `channel`.
    func occupancy(of channel: ChannelKey) async throws(RtmError) -> Int
    /// The sessions in `channel` that asked for presence events.
    func listeners(of channel: ChannelKey) async throws(RtmError) -> [SessionID]
    /// The channels `user` shows in (quiet memberships left out).
    func visibleChannels(of user: UserKey) async throws(RtmError) -> [ChannelKey]
    /// A session's life, for user-level presence, at wall time `at`.
    func record(_ sighting: Sighting, of session: Caller, at: WallClockTime) async throws(RtmError)
    /// The presence of `users` as of wall time `now`, in the order asked.
    func presence(of users: [UserKey], now: WallClockTime) async throws(RtmError) -> [UserPresence]

    // MARK: A store shared by several nodes (defaults in `SharedPresenceStore.swift`)

    /// Connects to what keeps presence; throws an error naming what failed (the server does not
    /// start). Called once, before any operation.
    func open() async throws
    /// Lets go of what `open` took.
    func close() async
    /// True when every change others are told of is published for every node that shares the
    /// store, numbered per channel in the store's order: the module then tells its listeners
    /// what the relay brings (`DeliverRelayedPresence`), its own changes included, instead of
    /// what each call returns, so every node tells one channel's changes in one order.
    var publishesChanges: Bool { get }
    /// The change the store published as `payload`; nil when `payload` is not one.
    func change(publishedAs payload: [UInt8]) -> PublishedPresenceChange?
    /// `leave`, saying whether the member timed out (what a published change tells).
    func leave(_ member: Caller, _ channel: ChannelKey, timedOut: Bool) async throws(RtmError) -> MemberChange?
    /// `setState`, made by `session` (nil: the server), shown to the others when `shows`.
    func setState(
        of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits, by session: SessionID?, shows: Bool
    ) async throws(RtmError) -> StateChange
    /// `removeState`, made by `session` (nil: the server), shown to the others when `shows`.
    func removeState(
        of user: UserKey, in channel: ChannelKey, keys: [String], by session: SessionID?, shows: Bool
    ) async throws(RtmError) -> StateChange
    /// The first `limit` visible members of `channel` with their states, its occupancy, and the
    /// number of the last published change they include, in one step.
    func snapshot(of channel: ChannelKey, limit: Int) async throws(RtmError) -> PresenceSnapshot
    /// Moves the memberships of `session`'s number from node `node`, which held it, to this node,
    /// silently (the session goes on here), and answers them. A store of one node holds no
    /// other node's sessions: none.
    func takeOver(_ session: Caller, fromNode node: String) async throws(RtmError) -> [HeldMembership]
    /// Writes back what this node's sessions held in a shared store that lost it (it restarted
    /// with nothing kept): each membership joins again, told to the members as a join, with its
    /// user's state. What the store still holds is left as it is. Returns how many memberships
    /// were written back; a store of one node loses nothing: 0.
    func restore() async throws(RtmError) -> Int
    /// Every channel of `app` with a member on any node that shares the store, with its members
    /// and users, in no particular order; nil for a store of one node, whose module counts its own
    /// roster.
    func channelSummaries(in app: AppID) async throws(RtmError) -> [ChannelSummary]?
}

/// A session's membership of one channel before and after one change.
public struct MemberChange: Sendable, Hashable {
    /// The member's user id.
    public var user: UserID
    /// The features it had; nil when it was not a member.
    public var before: ChannelFeatures?
    /// The features it has now; nil when it is no longer a member.
    public var after: ChannelFeatures?
    /// How many other sessions of the same user show in the channel.
    public var otherVisibleSessions: Int
    /// The user's state after the change (empty once its last session left).
    public var states: [String: String]
    /// How many users show in the channel after the change.
    public var occupancy: Int

    /// Creates a change.
    public init(
        user: UserID, before: ChannelFeatures?, after: ChannelFeatures?, otherVisibleSessions: Int,
        states: [String: String], occupancy: Int
    ) {
        self.user = user
        self.before = before
        self.after = after
        self.otherVisibleSessions = otherVisibleSessions
        self.states = states
        self.occupancy = occupancy
    }
}

/// What a state change did.
public struct StateChange: Sendable, Hashable {
    /// Whether any key was added, changed or removed.
    public var changed: Bool
    /// The user's whole state now.
    public var states: [String: String]
    /// Creates a change.
    public init(changed: Bool, states: [String: String]) {
        self.changed = changed
        self.states = states
    }
}

/// A user's state in a channel and whether the user shows there.
public struct MemberState: Sendable, Hashable {
    /// False when every session of the user in the channel is quiet.
    public var visible: Bool
    /// The user's state.
    public var states: [String: String]
    /// Creates the answer.
    public init(visible: Bool, states: [String: String]) {
        self.visible = visible
        self.states = states
    }
}

/// One page of a channel's visible members.
public struct MemberPage: Sendable, Hashable {
    /// The members, in join order.
    public var users: [UserState]
    /// Where the next page starts; nil when this page reached the end.
    public var next: UInt64?
    /// Creates a page.
    public init(users: [UserState], next: UInt64?) {
        self.users = users
        self.next = next
    }
}

/// A moment in a session's life that user-level presence records.
public enum Sighting: Sendable, Hashable {
    /// The session started.
    case opened
    /// It lost its connection and waits for a resume.
    case suspended
    /// It was resumed.
    case resumed
    /// It ended.
    case closed
}

extension ChannelFeatures {
    /// Whether a member with these features shows to others (it is not quiet).
    public var isVisible: Bool { !contains(.beQuiet) }
}
