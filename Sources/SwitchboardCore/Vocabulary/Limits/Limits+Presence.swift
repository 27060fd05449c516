extension Limits {
    /// Presence (`limits.presence`): temporary states, what a snapshot or a query lists, and
    /// interval mode.
    public struct Presence: Sendable, Hashable {
        /// Key/value pairs of one user's temporary state in one channel.
        public var statesPerUser = 32
        /// Key/value pairs an SDK keeps for channels it has not joined yet (the SDK holds and counts them).
        public var statesCachedBeforeJoin = 100
        /// Longest presence state key, in characters (Unicode scalars).
        public var stateKeyMaxLength = 32
        /// Largest presence state value, in bytes.
        public var stateValueMaxBytes = 8 * 1024
        /// Largest whole state of one user in one channel (keys and values), in bytes, so that it fits one push.
        public var stateMaxBytes = 16 * 1024
        /// Visible members above which a channel's presence events are sent at intervals (clamped into 8–128).
        public var intervalThreshold = 50
        /// The period of interval mode (clamped into 5–300 s).
        public var interval: PortableDuration = .seconds(30)
        /// How long a channel in interval mode stays at or below the threshold before its events are
        /// real-time again.
        public var intervalDebounce: PortableDuration = .seconds(2)
        /// Members a snapshot lists at most (the reference syncs up to 512 users' details).
        public var snapshotMaxUsers = 512
        /// Members one `whoNow` page lists at most.
        public var whoNowPageSize = 100
        /// User ids one `getUserPresence` call may ask about.
        public var userQueryMaxUsers = 100

        /// The reference's limits.
        public init() {}

        /// The interval-mode threshold in force: `intervalThreshold` clamped into 8–128.
        public var clampedIntervalThreshold: Int { intervalThreshold.clamped(to: 8...128) }

        /// The interval-mode period in force: `interval` clamped into 5–300 s.
        public var clampedInterval: PortableDuration { interval.clamped(to: .seconds(5)...(.seconds(300))) }
    }
}
