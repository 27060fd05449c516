/// Subscribe the caller's session to a message channel of its app.
public struct Subscribe: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Messages.subscribe.rawValue
    public var caller: Caller
    public var channelName: String
    public var features: RtmSubscribeChannelFeature
    /// Creates the request.
    public init(caller: Caller, channelName: String, features: RtmSubscribeChannelFeature = .defaultFeatures) {
        self.caller = caller
        self.channelName = channelName
        self.features = features
    }
}

/// Unsubscribe the caller's session from a message channel.
public struct Unsubscribe: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Messages.unsubscribe.rawValue
    public var caller: Caller
    public var channelName: String
    /// Creates the request.
    public init(caller: Caller, channelName: String) {
        self.caller = caller
        self.channelName = channelName
    }
}

/// Unsubscribe every session of a user of the caller's app from a message channel (the server's
/// API). Answers how many sessions left; `channelNotSubscribed` when none was subscribed.
public struct UnsubscribeUser: BusRequest {
    public typealias Response = Int
    public static let operation = OperationName.Messages.unsubscribe.rawValue
    public var caller: Caller
    public var channelName: String
    /// The user whose subscriptions end.
    public var userId: UserID
    /// Creates the request.
    public init(caller: Caller, channelName: String, userId: UserID) {
        self.caller = caller
        self.channelName = channelName
        self.userId = userId
    }
}

/// Publish a message on a message channel or to a user channel of the caller's app.
public struct Publish: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Messages.publish.rawValue
    public var caller: Caller
    public var channelType: RtmChannelType
    public var channelName: String
    public var payload: MessagePayload
    public var customType: String
    /// Creates the request.
    public init(
        caller: Caller, channelType: RtmChannelType, channelName: String, payload: MessagePayload,
        customType: String = ""
    ) {
        self.caller = caller
        self.channelType = channelType
        self.channelName = channelName
        self.payload = payload
        self.customType = customType
    }
}

/// A session subscribed to a message channel or joined a stream channel.
public struct ChannelJoined: BusEvent, Hashable {
    public var caller: Caller
    public var channel: ChannelKey
    /// What the member asked to hear. Joining again with other features publishes the event again.
    public var features: ChannelFeatures
    /// Creates the event.
    public init(caller: Caller, channel: ChannelKey, features: ChannelFeatures) {
        self.caller = caller
        self.channel = channel
        self.features = features
    }
}

/// Why a session left a channel.
public enum ChannelLeaveReason: Sendable, Hashable {
    /// It unsubscribed or left.
    case left
    /// Its session ended.
    case sessionClosed(SessionEndReason)
}

/// A session left a channel.
public struct ChannelLeft: BusEvent, Hashable {
    public var caller: Caller
    public var channel: ChannelKey
    public var reason: ChannelLeaveReason
    /// Creates the event.
    public init(caller: Caller, channel: ChannelKey, reason: ChannelLeaveReason) {
        self.caller = caller
        self.channel = channel
        self.reason = reason
    }
}

/// A message was accepted and handed to its receivers on this node (published only while
/// someone listens: an audit log, or the relay that forwards it to other nodes).
public struct MessagePublished: BusEvent, Hashable {
    public var publisher: Caller
    public var channel: ChannelKey
    /// The message as its receivers got it.
    public var delivery: MessageDelivery
    /// How many sessions of this node it was handed to.
    public var receivers: Int
    /// Creates the event.
    public init(publisher: Caller, channel: ChannelKey, delivery: MessageDelivery, receivers: Int) {
        self.publisher = publisher
        self.channel = channel
        self.delivery = delivery
        self.receivers = receivers
    }

    /// The payload's size in bytes.
    public var payloadBytes: Int { delivery.payload.byteCount }
    /// The user-defined type.
    public var customType: String { delivery.customType }
}

/// A message as subscribers receive it.
public struct MessageDelivery: Sendable, Hashable {
    /// The channel type it was published on (`.message`, `.user` or `.stream`).
    public var channelType: RtmChannelType
    /// The channel name; for a user channel, the publisher's user id as the receiver sees it.
    public var channelName: String
    /// The topic; empty outside stream channels.
    public var channelTopic: String
    /// The body as sent.
    public var payload: MessagePayload
    /// The publisher's user id.
    public var publisher: UserID
    /// The user-defined type.
    public var customType: String
    /// Server time of publication, milliseconds since 1970.
    public var timestamp: UInt64

    /// Creates a delivery.
    public init(
        channelType: RtmChannelType, channelName: String, channelTopic: String = "",
        payload: MessagePayload, publisher: UserID, customType: String, timestamp: UInt64
    ) {
        self.channelType = channelType
        self.channelName = channelName
        self.channelTopic = channelTopic
        self.payload = payload
        self.publisher = publisher
        self.customType = customType
        self.timestamp = timestamp
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int {
        Self.approximateSize(
            payload: payload.byteCount, channelName: channelName.utf8.count, channelTopic: channelTopic.utf8.count,
            publisher: publisher.utf8.count, customType: customType.utf8.count)
    }

    /// Bytes a message of values this long counts against the resume buffer.
    public static func approximateSize(payload: Int, channelName: Int, channelTopic: Int, publisher: Int, customType: Int) -> Int {
        payload + channelName + channelTopic + publisher + customType + 32
    }
}

/// A user-channel message found its receiver offline and was refused with
/// `channelReceiverOffline` (published only when someone subscribes to it: the webhooks, for
/// push notifications).
public struct UserMessageUndelivered: BusEvent, Hashable {
    /// The publisher.
    public var publisher: Caller
    /// The receiver, offline.
    public var receiver: UserKey
    /// The message as the receiver would have got it.
    public var delivery: MessageDelivery
    /// Creates the event.
    public init(publisher: Caller, receiver: UserKey, delivery: MessageDelivery) {
        self.publisher = publisher
        self.receiver = receiver
        self.delivery = delivery
    }
}
