import Synchronization
import SwitchboardCore

/// The topic store of one node: a `TopicTable` in this process's memory.
public final class InMemoryTopicStore: TopicStore {
    private let table = Mutex(TopicTable())

    /// An empty store.
    public init() {}

    public func join(_ member: StreamMember, to channel: ChannelKey, limits: Limits) throws(RtmError) -> [TopicInfo] {
        try table.withLock { table throws(RtmError) in try table.join(member, to: channel, limits: limits) }
    }

    public func leave(_ session: SessionID, from channel: ChannelKey) -> StreamDeparture? {
        table.withLock { $0.leave(session, from: channel) }
    }

    public func leaveAll(_ session: SessionID) -> [StreamDeparture] {
        table.withLock { $0.leaveAll(session) }
    }

    public func topics(of channel: ChannelKey) -> [TopicInfo] {
        table.withLock { $0.topics(of: channel) }
    }

    public func joinTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, options: TopicJoinOptions, limits: Limits,
        operation: String
    ) throws(RtmError) -> TopicPublisher {
        try table.withLock { table throws(RtmError) in
            try table.joinTopic(session, topic, in: channel, options: options, limits: limits, operation: operation)
        }
    }

    public func leaveTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, operation: String
    ) throws(RtmError) -> TopicPublisher {
        try table.withLock { table throws(RtmError) in try table.leaveTopic(session, topic, in: channel, operation: operation) }
    }

    public func publication(
        of session: SessionID, in topic: String, of channel: ChannelKey, operation: String
    ) throws(RtmError) -> (TopicPublication, receivers: [SessionID]) {
        try table.withLock { table throws(RtmError) in
            let publication = try table.publication(of: session, in: topic, of: channel, operation: operation)
            return (publication, table.receivers(of: publication.userId, in: topic, of: channel))
        }
    }

    public func subscribe(
        _ session: SessionID, to users: [UserID]?, in topic: String, of channel: ChannelKey, limits: Limits,
        operation: String
    ) throws(RtmError) -> TopicSubscription {
        try subscribe(session, to: users, in: topic, of: channel, limits: limits, operation: operation, publishers: nil)
    }

    /// `subscribe`, where no `users` means `publishers` (the topic's, in join order, as a store
    /// shared by nodes reads them) when given, else this store's publishers of the topic.
    public func subscribe(
        _ session: SessionID, to users: [UserID]?, in topic: String, of channel: ChannelKey, limits: Limits,
        operation: String, publishers: [UserID]?
    ) throws(RtmError) -> TopicSubscription {
        try table.withLock { table throws(RtmError) in
            try table.subscribe(
                session, to: users, in: topic, of: channel, limits: limits, operation: operation, publishers: publishers)
        }
    }

    public func receivers(of publisher: UserID, in topic: String, of channel: ChannelKey) -> [SessionID] {
        table.withLock { $0.receivers(of: publisher, in: topic, of: channel) }
    }

    /// Every membership this store holds, with the topics each member publishes in.
    public var memberships: [HeldStreamMembership] { table.withLock { $0.memberships } }

    /// Whether `session` is a member of `channel`.
    public func isMember(_ session: SessionID, of channel: ChannelKey) -> Bool {
        table.withLock { $0.isMember(session, of: channel) }
    }

    public func unsubscribe(
        _ session: SessionID, from users: [UserID]?, in topic: String, of channel: ChannelKey, operation: String
    ) throws(RtmError) {
        try table.withLock { table throws(RtmError) in
            try table.unsubscribe(session, from: users, in: topic, of: channel, operation: operation)
        }
    }
}
