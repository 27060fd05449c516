/// Join a stream channel of the caller's app (`RtmStreamChannel.join`).
public struct JoinStreamChannel: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.join.rawValue
    public var caller: Caller
    public var channelName: String
    /// The RTC token for this channel; checked when the server has app certificates.
    public var token: String
    /// What the member wants to hear.
    public var features: RtmJoinChannelFeature
    /// Creates the request.
    public init(caller: Caller, channelName: String, token: String = "", features: RtmJoinChannelFeature = [.presence]) {
        self.caller = caller
        self.channelName = channelName
        self.token = token
        self.features = features
    }
}

/// Leave a stream channel: the member's topics and subscriptions there end with it.
public struct LeaveStreamChannel: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.leave.rawValue
    public var caller: Caller
    public var channelName: String
    /// Creates the request.
    public init(caller: Caller, channelName: String) {
        self.caller = caller
        self.channelName = channelName
    }
}

/// Replace the RTC token of a joined stream channel (`RtmStreamChannel.renewToken`).
public struct RenewStreamChannelToken: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.renewToken.rawValue
    public var caller: Caller
    public var channelName: String
    public var token: String
    /// Creates the request.
    public init(caller: Caller, channelName: String, token: String) {
        self.caller = caller
        self.channelName = channelName
        self.token = token
    }
}

/// How a publisher joins a topic (`RtmJoinTopicOption`).
public struct TopicJoinOptions: Sendable, Hashable {
    /// Whether its messages keep their order.
    public var qos: RtmMessageQos
    /// Its messages' priority against the channel's other topics on a backlogged connection.
    public var priority: RtmMessagePriority
    /// The publisher's metadata, shown to others in topic events.
    public var meta: String
    /// Whether `sendTs` of its messages is their timestamp (aligned with the RTC stream).
    public var syncWithMedia: Bool
    /// Creates options; the defaults are the reference's.
    public init(qos: RtmMessageQos = .unordered, priority: RtmMessagePriority = .normal, meta: String = "", syncWithMedia: Bool = false) {
        self.qos = qos
        self.priority = priority
        self.meta = meta
        self.syncWithMedia = syncWithMedia
    }
}

/// Register the caller as a publisher of a topic in a joined stream channel.
public struct JoinTopic: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.joinTopic.rawValue
    public var caller: Caller
    public var channelName: String
    public var topic: String
    public var options: TopicJoinOptions
    /// Creates the request.
    public init(caller: Caller, channelName: String, topic: String, options: TopicJoinOptions = TopicJoinOptions()) {
        self.caller = caller
        self.channelName = channelName
        self.topic = topic
        self.options = options
    }
}

/// Stop publishing in a topic.
public struct LeaveTopic: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.leaveTopic.rawValue
    public var caller: Caller
    public var channelName: String
    public var topic: String
    /// Creates the request.
    public init(caller: Caller, channelName: String, topic: String) {
        self.caller = caller
        self.channelName = channelName
        self.topic = topic
    }
}

/// Publish a message in a topic the caller has joined.
public struct PublishTopicMessage: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.publishTopicMessage.rawValue
    public var caller: Caller
    public var channelName: String
    public var topic: String
    public var payload: MessagePayload
    public var customType: String
    /// The sender's timestamp, used as the message's when the topic was joined with `syncWithMedia`.
    public var sendTs: UInt64
    /// Creates the request.
    public init(
        caller: Caller, channelName: String, topic: String, payload: MessagePayload, customType: String = "",
        sendTs: UInt64 = 0
    ) {
        self.caller = caller
        self.channelName = channelName
        self.topic = topic
        self.payload = payload
        self.customType = customType
        self.sendTs = sendTs
    }
}

/// Subscribe to publishers of a topic: the given users (publishing now or later), or (nil) the
/// current publishers up to the per-topic limit. Incremental: earlier subscriptions stay.
public struct SubscribeTopic: BusRequest {
    public typealias Response = TopicSubscription
    public static let operation = OperationName.Stream.subscribeTopic.rawValue
    public var caller: Caller
    public var channelName: String
    public var topic: String
    public var users: [UserID]?
    /// Creates the request.
    public init(caller: Caller, channelName: String, topic: String, users: [UserID]? = nil) {
        self.caller = caller
        self.channelName = channelName
        self.topic = topic
        self.users = users
    }
}

/// The answer to `SubscribeTopic` (`RtmTopicSubscriptionResponse`).
public struct TopicSubscription: Sendable, Hashable {
    /// Publishers the caller is subscribed to now, of those asked for.
    public var succeedUsers: [UserID]
    /// Users that could not be subscribed to: not a valid user id, or (without a user list) past
    /// the publishers per topic subscription.
    public var failedUsers: [UserID]
    /// Creates the answer.
    public init(succeedUsers: [UserID], failedUsers: [UserID]) {
        self.succeedUsers = succeedUsers
        self.failedUsers = failedUsers
    }
}

/// Unsubscribe from the given publishers of a topic, or (nil) from the whole topic.
public struct UnsubscribeTopic: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Stream.unsubscribeTopic.rawValue
    public var caller: Caller
    public var channelName: String
    public var topic: String
    public var users: [UserID]?
    /// Creates the request.
    public init(caller: Caller, channelName: String, topic: String, users: [UserID]? = nil) {
        self.caller = caller
        self.channelName = channelName
        self.topic = topic
        self.users = users
    }
}

/// Check the RTC token a user gives to join a stream channel. Handled by the crypto module when
/// app certificates are configured; with no handler on the bus any token is accepted
/// (development mode).
public struct VerifyChannelJoinToken: BusRequest {
    public typealias Response = ChannelJoinGrant
    public static let operation = OperationName.Stream.join.rawValue
    public var app: AppID
    public var userId: UserID
    public var channelName: String
    public var token: String
    /// Creates the check.
    public init(app: AppID, userId: UserID, channelName: String, token: String) {
        self.app = app
        self.userId = userId
        self.channelName = channelName
        self.token = token
    }
}

/// What a valid channel-join token grants.
public struct ChannelJoinGrant: Sendable, Hashable {
    /// When the join privilege expires, in Unix seconds; nil when it never does.
    public var expiresAt: UInt64?
    /// Creates a grant.
    public init(expiresAt: UInt64?) { self.expiresAt = expiresAt }
}

/// A publisher in a topic as others see it (`RtmPublisherInfo`).
public struct TopicPublisher: Sendable, Hashable {
    /// The publisher's user id.
    public var userId: UserID
    /// The meta it joined the topic with.
    public var meta: String
    /// Creates the info.
    public init(userId: UserID, meta: String) {
        self.userId = userId
        self.meta = meta
    }
}

/// A topic and its publishers (`RtmTopicInfo`).
public struct TopicInfo: Sendable, Hashable {
    /// The topic name.
    public var topic: String
    /// Its publishers.
    public var publishers: [TopicPublisher]
    /// Creates the info.
    public init(topic: String, publishers: [TopicPublisher]) {
        self.topic = topic
        self.publishers = publishers
    }
}

/// A topic event pushed to the members of a stream channel (`RtmTopicEvent`).
public struct TopicEvent: Sendable, Hashable {
    /// Snapshot on join, a remote join or a remote leave.
    public var type: RtmTopicEventType
    /// The stream channel.
    public var channelName: String
    /// The user the event is about (for a snapshot, the user who joined).
    public var publisher: UserID
    /// The topics concerned, with their publishers.
    public var topicInfos: [TopicInfo]
    /// Server time of the event, milliseconds since 1970.
    public var timestamp: UInt64
    /// A large snapshot comes in parts (`PushParts`): true on every part but the last.
    public var more: Bool
    /// Creates the event.
    public init(
        type: RtmTopicEventType, channelName: String, publisher: UserID, topicInfos: [TopicInfo], timestamp: UInt64,
        more: Bool = false
    ) {
        self.type = type
        self.channelName = channelName
        self.publisher = publisher
        self.topicInfos = topicInfos
        self.timestamp = timestamp
        self.more = more
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int {
        topicInfos.reduce(channelName.utf8.count + publisher.utf8.count + 32) { total, info in
            info.publishers.reduce(total + info.topic.utf8.count + 8) { $0 + $1.userId.utf8.count + $1.meta.utf8.count + 8 }
        }
    }
}

extension TopicEvent: PartedEvent {
    /// A snapshot's parts: the same type in the same stream channel.
    public struct PartKey: Hashable, Sendable {
        let type: RtmTopicEventType
        let channelName: String
    }

    public var partKey: PartKey { PartKey(type: type, channelName: channelName) }

    /// Adds the part's topics; a topic cut between two parts continues the previous part's last one.
    public mutating func append(part: TopicEvent) {
        var infos = part.topicInfos[...]
        if let first = infos.first, let last = topicInfos.indices.last, topicInfos[last].topic == first.topic {
            topicInfos[last].publishers += first.publishers
            infos = infos.dropFirst()
        }
        topicInfos += infos
    }
}
