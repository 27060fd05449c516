/// Makes sure what happens in stream channel `channel` on any node (its topic changes and topic
/// messages) reaches this node's topic router from now on (`DeliverRelayedTopics`): returns once
/// it will. Sent by the topic router for a member that joins, once its join is applied and
/// before it takes the member's snapshot, so the snapshot and the changes after it leave no hole.
/// The relay stops listening by itself once this node has no member of `channel`.
///
/// On one node nothing handles it. Throws `channelJoinFailed` when the relay cannot listen now.
public struct OpenTopicRelay: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.openTopicRelay.rawValue
    /// The stream channel.
    public var channel: ChannelKey
    /// Creates the request.
    public init(_ channel: ChannelKey) {
        self.channel = channel
    }
}

/// What the relay tells the topic router about a stream channel.
public enum RelayedTopics: Sendable, Hashable {
    /// A topic change or a topic message, as the store published it (the store reads it back:
    /// `TopicStore.news(publishedAs:)`).
    case published([UInt8])
    /// Changes and messages may have been missed (the relay's link to Redis was down): send the
    /// channel's members here a new snapshot.
    case mayHaveMissedChanges
}

/// News of stream channel `channel`, for this node's members there. Sent by the relay in the
/// order it got them, which is the store's order for changes and each publisher's order for
/// messages; the topic router answers it.
public struct DeliverRelayedTopics: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.deliverRelayedTopics.rawValue
    /// The stream channel.
    public var channel: ChannelKey
    /// What happened.
    public var news: RelayedTopics
    /// Creates the request.
    public init(channel: ChannelKey, news: RelayedTopics) {
        self.channel = channel
        self.news = news
    }
}
