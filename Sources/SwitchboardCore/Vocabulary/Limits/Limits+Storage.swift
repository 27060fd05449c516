extension Limits {
    /// Channel and user metadata (`limits.storage`).
    public struct Storage: Sendable, Hashable {
        /// Longest metadata key, in characters (Unicode scalars).
        public var keyMaxLength = 32
        /// Largest metadata value, in bytes (16 KB).
        public var valueMaxBytes = 16 * 1024
        /// Largest metadata set (keys and values of every item), in bytes (16 KB).
        public var setMaxBytes = 16 * 1024
        /// Items in one metadata set (the reference names the code, -12002, but no figure; the
        /// 16 KB set size bounds the count anyway).
        public var itemsPerSet = 256
        /// Storage calls (metadata reads, writes, subscriptions) one client may make per second: the
        /// reference's soft limit (its hard limit is 20); `nil` lifts it.
        public var callsPerSecondPerClient: Int? = 10
        /// Users whose metadata one client may subscribe to (the reference names the code, -12017,
        /// but no figure).
        public var userSubscriptionsPerClient = 100
        /// Longest lease of a metadata item (beyond the reference), in milliseconds: 30 days.
        public var leaseMaxMilliseconds: UInt64 = 30 * 24 * 3600 * 1000

        /// The reference's limits.
        public init() {}
    }
}
