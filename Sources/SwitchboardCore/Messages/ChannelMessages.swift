/// Subscribe a session to a message channel.
public struct Subscribe: BusRequest {
    public typealias Response = Done
    public static let operation = "subscribe"
    public var session: SessionID
    public var userId: UserID
    public var channelName: String
    public var features: RtmSubscribeChannelFeature
    /// Creates the request.
    public init(session: SessionID, userId: UserID, channelName: String, features: RtmSubscribeChannelFeature = .defaultFeatures) {
        self.session = session
        self.userId = userId
        self.channelName = channelName
        self.features = features
    }
}

/// Unsubscribe a session from a message channel.
public struct Unsubscribe: BusRequest {
    public typealias Response = Done
    public static let operation = "unsubscribe"
    public var session: SessionID
    public var userId: UserID
    public var channelName: String
    /// Creates the request.
    public init(session: SessionID, userId: UserID, channelName: String) {
        self.session = session
        self.userId = userId
        self.channelName = channelName
    }
}

/// Publish a message on a message channel or to a user channel.
public struct Publish: BusRequest {
    public typealias Response = Done
    public static let operation = "publish"
    public var session: SessionID
    public var userId: UserID
    public var channelType: RtmChannelType
    public var channelName: String
    public var payload: MessagePayload
    public var customType: String
    /// Creates the request.
    public init(
        session: SessionID, userId: UserID, channelType: RtmChannelType, channelName: String,
        payload: MessagePayload, customType: String = ""
    ) {
        self.session = session
        self.userId = userId
        self.channelType = channelType
        self.channelName = channelName
        self.payload = payload
        self.customType = customType
    }
}

/// The channels a session is subscribed to or has joined.
public struct ChannelsOfSession: BusRequest {
    public typealias Response = [ChannelKey]
    public static let operation = "channelsOfSession"
    public var session: SessionID
    /// Creates the query.
    public init(session: SessionID) { self.session = session }
}

/// A session subscribed to a message channel or joined a stream channel.
public struct ChannelJoined: BusEvent, Hashable {
    public var session: SessionID
    public var userId: UserID
    public var channel: ChannelKey
    /// The features as a raw option set (`RtmSubscribeChannelFeature` or `RtmJoinChannelFeature`).
    public var features: UInt32
    /// Creates the event.
    public init(session: SessionID, userId: UserID, channel: ChannelKey, features: UInt32) {
        self.session = session
        self.userId = userId
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
    public var session: SessionID
    public var userId: UserID
    public var channel: ChannelKey
    public var reason: ChannelLeaveReason
    /// Creates the event.
    public init(session: SessionID, userId: UserID, channel: ChannelKey, reason: ChannelLeaveReason) {
        self.session = session
        self.userId = userId
        self.channel = channel
        self.reason = reason
    }
}

/// A message was accepted and handed to its receivers.
public struct MessagePublished: BusEvent, Hashable {
    public var publisher: UserID
    public var channel: ChannelKey
    public var payloadBytes: Int
    public var customType: String
    public var receivers: Int
    /// Creates the event.
    public init(publisher: UserID, channel: ChannelKey, payloadBytes: Int, customType: String, receivers: Int) {
        self.publisher = publisher
        self.channel = channel
        self.payloadBytes = payloadBytes
        self.customType = customType
        self.receivers = receivers
    }
}
