/// Every limit of the reference, with the reference's default. The server enforces each one.
public struct Limits: Sendable, Hashable {
    /// Largest message-channel or user-channel payload, in bytes (32 KB).
    public var messagePayloadMaxBytes = 32 * 1024
    /// Longest `customType`, in characters.
    public var customTypeMaxLength = 32
    /// Longest channel name, in characters.
    public var channelNameMaxLength = 64
    /// Longest user id, in bytes.
    public var userIdMaxBytes = 64
    /// Message channels one client may subscribe to.
    public var subscribedChannelsPerClient = 50
    /// Messages one client may publish per second; `nil` lifts the limit (benchmarks only).
    public var publishesPerSecondPerClient: Int? = 60
    /// Other API calls (subscribe, unsubscribe …) one client may make per second; `nil` lifts it.
    public var otherCallsPerSecondPerClient: Int? = 20
    /// Messages one message channel carries per second, from all its publishers together; the
    /// excess is discarded, as the reference does (the publish still succeeds). `nil` lifts it.
    public var messagesPerSecondPerChannel: Int? = 60
    /// Subscribe calls one session may make to the same channel within `subscribeAttemptWindow`;
    /// more are refused with `channelSubscribeTooFrequent`.
    public var subscribeAttemptsPerChannel = 2
    /// The window of `subscribeAttemptsPerChannel`.
    public var subscribeAttemptWindow: Duration = .seconds(5)
    /// Stream channels one client may join.
    public var joinedStreamChannelsPerClient = 10
    /// Users per stream channel.
    public var usersPerStreamChannel = 128
    /// Topics one client may join (publish in) per stream channel.
    public var joinedTopicsPerChannel = 8
    /// Topics one client may subscribe to per stream channel.
    public var subscribedTopicsPerChannel = 50
    /// Publishers one client may subscribe to in one topic.
    public var publishersPerTopicSubscription = 64
    /// Longest topic name, in characters.
    public var topicNameMaxLength = 16
    /// Largest topic meta, in bytes.
    public var topicMetaMaxBytes = 256
    /// Largest topic message payload, in bytes (1 KB).
    public var topicMessagePayloadMaxBytes = 1024
    /// Messages per second in one topic of one stream channel; `nil` lifts the limit.
    public var topicMessagesPerSecond: Int? = 200
    /// Concurrent logged-in users per app.
    public var concurrentUsers = 50_000
    /// Users per channel.
    public var usersPerChannel = 50_000
    /// Allowed `heartbeatInterval`, in seconds; values outside are clamped.
    public var heartbeatIntervalRange: ClosedRange<Int> = 5...1800
    /// Default `heartbeatInterval`, in seconds.
    public var defaultHeartbeatInterval = 5
    /// Extra silence tolerated after a missed heartbeat before a client counts as lost, in seconds.
    public var heartbeatGrace = 10
    /// Allowed `presenceTimeout`, in seconds; values outside are clamped.
    public var presenceTimeoutRange: ClosedRange<Int> = 5...300
    /// Default `presenceTimeout`, in seconds.
    public var defaultPresenceTimeout = 300
    /// Messages kept for a disconnected session until it resumes.
    public var resumeBufferMaxMessages = 1_000
    /// Bytes of messages kept for a disconnected session until it resumes.
    public var resumeBufferMaxBytes = 1024 * 1024
    /// Bytes of messages kept for all disconnected sessions together, server-wide: past it the
    /// oldest are forgotten first (the session detached longest ago loses its oldest), and a
    /// resume reports them in `lostMessages`.
    public var resumeBufferTotalBytes = 256 * 1024 * 1024
    /// Recent messages kept for a connected session, to send again after a resume when its
    /// connection died before the server noticed.
    public var resumeReplayMaxMessages = 128
    /// Recent bytes kept for a connected session, for the same purpose.
    public var resumeReplayMaxBytes = 64 * 1024
    /// Locks one channel may have.
    public var locksPerChannel = 32
    /// Allowed lock ttl, in seconds; values outside are refused.
    public var lockTTLRange: ClosedRange<Int> = 10...300
    /// Default lock ttl, in seconds.
    public var defaultLockTTL = 10
    /// Longest lock name, in characters.
    public var lockNameMaxLength = 64
    /// Lock acquire calls one client may make per second; `nil` lifts the limit.
    public var lockAcquiresPerSecondPerClient: Int? = 10

    /// The reference's limits.
    public init() {}

    /// The reference's limits with the per-client rate limits lifted (for load tests).
    public static var withoutRateLimits: Limits {
        var limits = Limits()
        limits.publishesPerSecondPerClient = nil
        limits.otherCallsPerSecondPerClient = nil
        limits.messagesPerSecondPerChannel = nil
        limits.topicMessagesPerSecond = nil
        limits.lockAcquiresPerSecondPerClient = nil
        return limits
    }

    /// Clamps a requested heartbeat interval into the allowed range (0 means the default).
    public func clampedHeartbeatInterval(_ seconds: Int) -> Int {
        seconds == 0 ? defaultHeartbeatInterval : min(max(seconds, heartbeatIntervalRange.lowerBound), heartbeatIntervalRange.upperBound)
    }

    /// Clamps a requested presence timeout into the allowed range (0 means the default).
    public func clampedPresenceTimeout(_ seconds: Int) -> Int {
        seconds == 0 ? defaultPresenceTimeout : min(max(seconds, presenceTimeoutRange.lowerBound), presenceTimeoutRange.upperBound)
    }
}
