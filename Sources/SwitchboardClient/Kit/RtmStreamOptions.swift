import Foundation
import SwitchboardCore

/// Options of `RtmStreamChannel.join` (`AgoraRtmJoinChannelOption`).
public final class RtmJoinChannelOption: NSObject {
    /// The RTC token for the channel; nil or empty when the server has no app certificate.
    public var token: String?
    /// Which event notifications to receive; presence by default.
    public var features: RtmJoinChannelFeature = [.presence]
    /// Creates the defaults.
    public override init() {}
}

/// Options of `RtmStreamChannel.joinTopic` (`AgoraRtmJoinTopicOption`).
public final class RtmJoinTopicOption: NSObject {
    /// Whether the topic's messages keep their order; `unordered` by default.
    public var qos: RtmMessageQos = .unordered
    /// The topic's priority against the channel's other topics; `normal` by default.
    public var priority: RtmMessagePriority = .normal
    /// Metadata shown to others with this publisher, at most 256 bytes.
    public var meta: String?
    /// Whether messages carry `sendTs` as their timestamp, aligned with the RTC stream.
    public var syncWithMedia: Bool = false
    /// Creates the defaults.
    public override init() {}
}

/// Options of `RtmStreamChannel.publishTopicMessage` (`AgoraRtmTopicMessageOptions`).
public final class RtmTopicMessageOptions: NSObject {
    /// The sender's timestamp; used only in a topic joined with `syncWithMedia`.
    public var sendTs: UInt64 = 0
    /// A user-defined type, at most 32 characters.
    public var customType: String = ""
    /// Creates the defaults.
    public override init() {}
}

/// Options of `subscribeTopic` and `unsubscribeTopic` (`AgoraRtmTopicOption`).
public final class RtmTopicOption: NSObject {
    /// The publishers to subscribe to or unsubscribe from; nil for the current publishers (up to
    /// 64) when subscribing, for all when unsubscribing.
    public var users: [String]?
    /// Creates the defaults.
    public override init() {}
}

/// The answer to `subscribeTopic` (`AgoraRtmTopicSubscriptionResponse`).
public final class RtmTopicSubscriptionResponse: NSObject, Sendable {
    /// The users now subscribed to, of those asked for.
    public let succeedUsers: [String]
    /// The users that could not be subscribed to.
    public let failedUsers: [String]
    /// Creates a response.
    public init(succeedUsers: [String], failedUsers: [String]) {
        self.succeedUsers = succeedUsers
        self.failedUsers = failedUsers
    }
}

/// The completion block of `subscribeTopic` (`AgoraRtmTopicSubscriptionBlock`).
public typealias RtmTopicSubscriptionBlock = @Sendable (RtmTopicSubscriptionResponse?, RtmErrorInfo?) -> Void
