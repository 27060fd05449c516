extension Limits {
    /// Stream channels and their topics (`limits.streams`).
    public struct Streams: Sendable, Hashable {
        /// Stream channels one client may join.
        public var joinedChannelsPerClient = 10
        /// Users per stream channel.
        public var usersPerChannel = 128
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
        public var topicPayloadMaxBytes = 1024
        /// Messages per second in one topic of one stream channel; `nil` lifts the limit.
        public var topicMessagesPerSecond: Int? = 200

        /// The reference's limits.
        public init() {}
    }
}
