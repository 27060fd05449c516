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
    /// Longest metadata key, in characters (Unicode scalars).
    public var metadataKeyMaxLength = 32
    /// Largest metadata value, in bytes (16 KB).
    public var metadataValueMaxBytes = 16 * 1024
    /// Largest metadata set (keys and values of every item), in bytes (16 KB).
    public var metadataSetMaxBytes = 16 * 1024
    /// Items in one metadata set (the reference names the code, -12002, but no figure; the
    /// 16 KB set size bounds the count anyway).
    public var metadataItemsPerSet = 256
    /// Storage calls (metadata reads, writes, subscriptions) one client may make per second: the
    /// reference's soft limit (its hard limit is 20); `nil` lifts it.
    public var storageCallsPerSecondPerClient: Int? = 10
    /// Users whose metadata one client may subscribe to (the reference names the code, -12017,
    /// but no figure).
    public var userMetadataSubscriptionsPerClient = 100
    /// Longest lease of a metadata item (beyond the reference), in milliseconds: 30 days.
    public var metadataLeaseMaxMilliseconds: UInt64 = 30 * 24 * 3600 * 1000
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
    /// Key/value pairs of one user's temporary state in one channel.
    public var presenceStatesPerUser = 32
    /// Key/value pairs an SDK keeps for channels it has not joined yet (the SDK holds and counts them).
    public var presenceStatesCachedBeforeJoin = 100
    /// Longest presence state key, in characters (Unicode scalars).
    public var presenceStateKeyMaxLength = 32
    /// Largest presence state value, in bytes.
    public var presenceStateValueMaxBytes = 8 * 1024
    /// Largest whole state of one user in one channel (keys and values), in bytes, so that it fits one push.
    public var presenceStateMaxBytes = 16 * 1024
    /// Visible members above which a channel's presence events are sent at intervals (clamped into 8–128).
    public var presenceIntervalThreshold = 50
    /// The period of interval mode (clamped into 5–300 s).
    public var presenceInterval: Duration = .seconds(30)
    /// How long a channel in interval mode stays at or below the threshold before its events are
    /// real-time again.
    public var presenceIntervalDebounce: Duration = .seconds(2)
    /// Members a snapshot lists at most (the reference syncs up to 512 users' details).
    public var presenceSnapshotMaxUsers = 512
    /// Members one `whoNow` page lists at most.
    public var presenceWhoNowPageSize = 100
    /// User ids one `getUserPresence` call may ask about.
    public var presenceUserQueryMaxUsers = 100
    /// Locks one channel may have.
    public var locksPerChannel = 32
    /// Locks all the channels of one app may have together (beyond the reference, which names no
    /// figure): a bound on the lock table, whatever clients do.
    public var locksPerApp = 100_000
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
        limits.storageCallsPerSecondPerClient = nil
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

    /// The interval-mode threshold in force: `presenceIntervalThreshold` clamped into 8–128.
    public var clampedPresenceIntervalThreshold: Int { min(max(presenceIntervalThreshold, 8), 128) }

    /// The interval-mode period in force: `presenceInterval` clamped into 5–300 s.
    public var clampedPresenceInterval: Duration { min(max(presenceInterval, .seconds(5)), .seconds(300)) }
}
