import SwitchboardCore

/// What a topic store shared by several nodes adds: opening and closing, snapshots numbered in the
/// store's order, and topic messages and changes published for every node. Each has a default for
/// a store of one node, which publishes nothing.
extension TopicStore {
    public func open() async throws {}
    public func close() async {}
    public var publishesChanges: Bool { false }

    public func snapshot(of channel: ChannelKey) async throws(RtmError) -> TopicSnapshot {
        TopicSnapshot(topics: try await topics(of: channel), sequence: 0)
    }

    public func relay(_ message: TopicMessage) throws(RtmError) {}
    public func news(publishedAs payload: [UInt8]) -> TopicNews? { nil }
    public func endTakenOver(_ session: SessionID, fromNode node: String) async throws(RtmError) {}
    public func restore() async throws(RtmError) -> Int { 0 }
}

/// One stream-channel membership of a session, with the topics it publishes in.
public struct HeldStreamMembership: Sendable, Hashable {
    /// The member.
    public var member: Caller
    /// The stream channel.
    public var channel: ChannelKey
    /// The topics it publishes in, each with its metadata.
    public var topics: [String: String]

    /// Creates a membership.
    public init(member: Caller, channel: ChannelKey, topics: [String: String]) {
        self.member = member
        self.channel = channel
        self.topics = topics
    }
}

/// The topics of a stream channel as a member is shown them.
public struct TopicSnapshot: Sendable, Hashable {
    /// The topics with publishers, by name, each with its publishers in join order.
    public var topics: [TopicInfo]
    /// The number of the last published change they include (0: a store that does not publish).
    public var sequence: UInt64
    /// Creates a snapshot.
    public init(topics: [TopicInfo], sequence: UInt64) {
        self.topics = topics
        self.sequence = sequence
    }
}

/// A topic message on its way to the subscribers of other nodes.
public struct TopicMessage: Sendable, Hashable {
    /// The stream channel.
    public var channel: ChannelKey
    /// The message as receivers get it (its topic in `channelTopic`).
    public var delivery: MessageDelivery
    /// Its topic's priority, which the receivers' outboxes keep.
    public var priority: RtmMessagePriority
    /// Creates a message.
    public init(channel: ChannelKey, delivery: MessageDelivery, priority: RtmMessagePriority) {
        self.channel = channel
        self.delivery = delivery
        self.priority = priority
    }
}

/// A change of a stream channel's topics that the other members are told of, as a publishing
/// store published it: numbered in the channel's order.
public struct PublishedTopicChange: Sendable, Hashable {
    /// The stream channel.
    public var channel: ChannelKey
    /// The change's number in the channel's order (numbers grow; not every number is told).
    public var sequence: UInt64
    /// `remoteJoinTopic` or `remoteLeaveTopic`.
    public var type: RtmTopicEventType
    /// The user who joined or left.
    public var publisher: UserID
    /// The topics concerned, each with that user as its publisher.
    public var topics: [TopicInfo]
    /// The session of this node that made the change, which is not told it; nil when another
    /// node's.
    public var except: SessionID?

    /// Creates a change.
    public init(
        channel: ChannelKey, sequence: UInt64, type: RtmTopicEventType, publisher: UserID, topics: [TopicInfo], except: SessionID?
    ) {
        self.channel = channel
        self.sequence = sequence
        self.type = type
        self.publisher = publisher
        self.topics = topics
        self.except = except
    }
}

/// What a publishing store published, read back on a node.
public enum TopicNews: Sendable, Hashable {
    /// A change of a channel's topics, this node's own included.
    case change(PublishedTopicChange)
    /// Another node's topic message.
    case message(TopicMessage)
    /// A message this node published: its subscribers here had it when it was published.
    case echo
}
