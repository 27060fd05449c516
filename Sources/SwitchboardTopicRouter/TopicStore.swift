import SwitchboardCore

/// Where the topic router keeps stream-channel membership, topic publishers and topic
/// subscriptions, every channel keyed by app.
///
/// The store recipe (Modules.md): every method is one atomic check-and-change (limits are checked
/// and the change made together), the shape a shared store needs (one script per call in Redis),
/// and returns what it changed, so a cluster store can replace `InMemoryTopicStore` without
/// touching the router's event logic. The router calls it one operation at a time and publishes
/// the effects in the store's order. Errors carry the reference's codes and the operation passed
/// in.
public protocol TopicStore: Sendable {
    /// Adds `member` to `channel` and returns the channel's topics as the member finds them.
    /// Throws `duplicateOperation` when it is a member already, `channelInstanceExceedLimitation`
    /// past the stream channels per client, `channelJoinFailed` past the users per channel.
    func join(_ member: StreamMember, to channel: ChannelKey, limits: Limits) async throws(RtmError) -> [TopicInfo]

    /// Removes `session` from `channel` with its topics and subscriptions there; nil when it was
    /// not a member.
    func leave(_ session: SessionID, from channel: ChannelKey) async throws(RtmError) -> StreamDeparture?

    /// Removes `session` from every stream channel, in channel-name order.
    func leaveAll(_ session: SessionID) async throws(RtmError) -> [StreamDeparture]

    /// The topics of `channel` that have publishers, by name, each with its publishers in join order.
    func topics(of channel: ChannelKey) async throws(RtmError) -> [TopicInfo]

    /// Registers `session` as a publisher of `topic`. Throws `channelNotJoined` for a non-member,
    /// `duplicateOperation` when it publishes there already, `channelJoinTopicFailed` past the
    /// topics per client per channel.
    func joinTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, options: TopicJoinOptions, limits: Limits,
        operation: String
    ) async throws(RtmError) -> TopicPublisher

    /// Ends `session`'s publishing in `topic`. Throws `channelNotJoined` or `channelTopicNotJoined`.
    func leaveTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, operation: String
    ) async throws(RtmError) -> TopicPublisher

    /// The publisher `session` is in `topic`, with its options, and the sessions subscribed to it
    /// there, in session order. Throws `channelNotJoined` or `channelTopicNotJoined`.
    func publication(
        of session: SessionID, in topic: String, of channel: ChannelKey, operation: String
    ) async throws(RtmError) -> (TopicPublication, receivers: [SessionID])

    /// Subscribes `session` to `users` (nil: the current publishers, up to the limit) of `topic`,
    /// adding to what it had. A named user need not publish yet: its messages are delivered from
    /// when it does; a name that is no valid user id fails. Throws `channelNotJoined`, `channelExceedTopicLimitation` past the
    /// subscribed topics per channel, `channelExceedTopicUserLimitation` when the named users
    /// would take the subscription past the publishers per topic.
    func subscribe(
        _ session: SessionID, to users: [UserID]?, in topic: String, of channel: ChannelKey, limits: Limits,
        operation: String
    ) async throws(RtmError) -> TopicSubscription

    /// Unsubscribes `session` from `users` (nil: all) of `topic`. Throws `channelNotJoined` or
    /// `channelTopicNotSubscribed`.
    func unsubscribe(
        _ session: SessionID, from users: [UserID]?, in topic: String, of channel: ChannelKey, operation: String
    ) async throws(RtmError)

    /// This node's sessions subscribed to `publisher` in `topic` of `channel`, in session order
    /// (whom another node's message goes to here).
    func receivers(of publisher: UserID, in topic: String, of channel: ChannelKey) async throws(RtmError) -> [SessionID]

    // What a store shared by several nodes adds; each has a default for a store of one node
    // (`SharedTopicStore.swift`).

    /// Connects to what keeps the topics; throws an error naming what failed (the server does not
    /// start). Called once, before any operation.
    func open() async throws
    /// Lets go of what `open` took.
    func close() async
    /// True when every topic change others are told of is published for every node that shares
    /// the store, numbered per channel in the store's order, and topic messages handed to
    /// `relay` reach the other nodes: the router then tells its members what the relay brings
    /// (`DeliverRelayedTopics`), its own changes included, instead of what each call returns.
    var publishesChanges: Bool { get }
    /// The topics of `channel` with the number of the last published change they include, in one
    /// step.
    func snapshot(of channel: ChannelKey) async throws(RtmError) -> TopicSnapshot
    /// Hands `message`, delivered to this node's subscribers already, to the other nodes, behind
    /// every message handed before it. Throws `channelPublishMessageFailed` when it cannot now.
    func relay(_ message: TopicMessage) throws(RtmError)
    /// What the store published as `payload`; nil when `payload` is none of its.
    func news(publishedAs payload: [UInt8]) -> TopicNews?
    /// The number `session` of node `node`, which another node just took over, leaves every
    /// stream channel there, its topics' leave told to the members (its client joins again); a
    /// store of one node holds no other node's sessions: nothing.
    func endTakenOver(_ session: SessionID, fromNode node: String) async throws(RtmError)
    /// Writes back what this node's sessions held in a shared store that lost it (it restarted
    /// with nothing kept): each stream-channel membership, and the topics each member publishes
    /// in (told to the members as topic joins). What the store still holds is left as it is.
    /// Returns how many memberships were written back; a store of one node loses nothing: 0.
    func restore() async throws(RtmError) -> Int
}

/// A member of a stream channel.
public struct StreamMember: Sendable, Hashable {
    /// Its session and user.
    public var caller: Caller
    /// What it asked to hear.
    public var features: RtmJoinChannelFeature
    /// Creates a member.
    public init(caller: Caller, features: RtmJoinChannelFeature) {
        self.caller = caller
        self.features = features
    }
}

/// A publisher's registration in a topic.
public struct TopicPublication: Sendable, Hashable {
    /// The publishing user.
    public var userId: UserID
    /// The options it joined the topic with.
    public var options: TopicJoinOptions
    /// Creates the registration.
    public init(userId: UserID, options: TopicJoinOptions) {
        self.userId = userId
        self.options = options
    }
}

/// What a member left behind when it left a stream channel.
public struct StreamDeparture: Sendable, Hashable {
    /// The channel.
    public var channel: ChannelKey
    /// The member that left.
    public var caller: Caller
    /// The topics it published in, each with itself as the publisher, by name.
    public var topics: [TopicInfo]
    /// Creates a departure.
    public init(channel: ChannelKey, caller: Caller, topics: [TopicInfo]) {
        self.channel = channel
        self.caller = caller
        self.topics = topics
    }
}
