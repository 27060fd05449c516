/// Channel types (`AgoraRtmChannelType`).
public enum RtmChannelType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Unknown or unset.
    case none = 0
    /// A message channel (pub/sub).
    case message = 1
    /// A stream channel with topics.
    case stream = 2
    /// A user channel (point to point).
    case user = 3
}

/// Event notification types chosen when subscribing to a message channel (`AgoraRtmSubscribeChannelFeature`).
public struct RtmSubscribeChannelFeature: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Presence event notifications.
    public static let presence = RtmSubscribeChannelFeature(rawValue: 1)
    /// Storage event notifications.
    public static let metadata = RtmSubscribeChannelFeature(rawValue: 1 << 1)
    /// Message event notifications.
    public static let message = RtmSubscribeChannelFeature(rawValue: 1 << 2)
    /// Lock event notifications.
    public static let lock = RtmSubscribeChannelFeature(rawValue: 1 << 3)
    /// Quiet mode: others are not told about this subscriber's activity.
    public static let beQuiet = RtmSubscribeChannelFeature(rawValue: 1 << 4)
    /// The reference's default: `[.message, .presence]`.
    public static let defaultFeatures: RtmSubscribeChannelFeature = [.message, .presence]
}

/// Event notification types chosen when joining a stream channel (`AgoraRtmJoinChannelFeature`).
public struct RtmJoinChannelFeature: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Presence event notifications.
    public static let presence = RtmJoinChannelFeature(rawValue: 1)
    /// Storage event notifications.
    public static let metadata = RtmJoinChannelFeature(rawValue: 1 << 1)
    /// Lock event notifications.
    public static let lock = RtmJoinChannelFeature(rawValue: 1 << 2)
    /// Quiet mode.
    public static let beQuiet = RtmJoinChannelFeature(rawValue: 1 << 3)
}

/// Quality of service for topic messages (`AgoraRtmMessageQos`).
public enum RtmMessageQos: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Not guaranteed to arrive in order.
    case unordered = 0
    /// Arrives in order.
    case ordered = 1
}

/// Message priority (`AgoraRtmMessagePriority`).
public enum RtmMessagePriority: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Highest.
    case highest = 0
    /// High.
    case high = 1
    /// Normal.
    case normal = 4
    /// Low.
    case low = 8
}

/// Presence event types (`AgoraRtmPresenceEventType`).
public enum RtmPresenceEventType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Unknown.
    case none = 0
    /// Snapshot of the channel when joining.
    case snapshot = 1
    /// Aggregated changes sent at intervals.
    case interval = 2
    /// A remote user joined.
    case remoteJoinChannel = 3
    /// A remote user left.
    case remoteLeaveChannel = 4
    /// A remote user's connection timed out.
    case remoteConnectionTimeout = 5
    /// A remote user's temporary state changed.
    case remoteStateChanged = 6
    /// The user did not enable presence when joining.
    case errorOutOfService = 7
}

/// Topic event types (`AgoraRtmTopicEventType`).
public enum RtmTopicEventType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Unknown.
    case none = 0
    /// Snapshot of topics when joining.
    case snapshot = 1
    /// A remote user joined a topic.
    case remoteJoinTopic = 2
    /// A remote user left a topic.
    case remoteLeaveTopic = 3
}

/// Storage types (`AgoraRtmStorageType`).
public enum RtmStorageType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Unknown.
    case none = 0
    /// User metadata.
    case user = 1
    /// Channel metadata.
    case channel = 2
}

/// Storage event types (`AgoraRtmStorageEventType`).
public enum RtmStorageEventType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Unknown.
    case none = 0
    /// Full data when subscribing or joining.
    case snapshot = 1
    /// Items were set (incremental mode).
    case set = 2
    /// Items were set, updated or removed.
    case update = 3
    /// Items were removed (incremental mode).
    case remove = 4
}

/// Lock event types (`AgoraRtmLockEventType`).
public enum RtmLockEventType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Unknown.
    case none = 0
    /// Snapshot of locks when joining.
    case snapshot = 1
    /// A lock was set.
    case lockSet = 2
    /// A lock was removed.
    case lockRemoved = 3
    /// A lock was acquired.
    case lockAcquired = 4
    /// A lock was released.
    case lockReleased = 5
    /// A lock expired.
    case lockExpired = 6
}
