extension Limits {
    /// Message channels and user channels (`limits.messages`).
    public struct Messages: Sendable, Hashable {
        /// Largest message-channel or user-channel payload, in bytes (32 KB).
        public var payloadMaxBytes = 32 * 1024
        /// Longest `customType` of any message (topic messages too), in characters.
        public var customTypeMaxLength = 32
        /// Message channels one client may subscribe to.
        public var subscribedChannelsPerClient = 50
        /// Users per channel.
        public var usersPerChannel = 50_000
        /// Messages one client may publish per second; `nil` lifts the limit (benchmarks only).
        public var publishesPerSecondPerClient: Int? = 60
        /// Messages one message channel carries per second, from all its publishers together; the
        /// excess is discarded, as the reference does (the publish still succeeds). `nil` lifts it.
        public var perChannelPerSecond: Int? = 60
        /// Subscribe calls one session may make to the same channel within `subscribeAttemptWindow`;
        /// more are refused with `channelSubscribeTooFrequent`.
        public var subscribeAttemptsPerChannel = 2
        /// The window of `subscribeAttemptsPerChannel`.
        public var subscribeAttemptWindow: PortableDuration = .seconds(5)

        /// The reference's limits.
        public init() {}
    }
}
