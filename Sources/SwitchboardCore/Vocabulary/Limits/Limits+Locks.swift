extension Limits {
    /// Locks (`limits.locks`).
    public struct Locks: Sendable, Hashable {
        /// Locks one channel may have.
        public var perChannel = 32
        /// Locks all the channels of one app may have together (beyond the reference, which names no
        /// figure): a bound on the lock table, whatever clients do.
        public var perApp = 100_000
        /// Allowed lock ttl, in seconds; values outside are refused.
        public var ttlRange: ClosedRange<Int> = 10...300
        /// Default lock ttl, in seconds.
        public var defaultTTL = 10
        /// Longest lock name, in characters.
        public var nameMaxLength = 64
        /// Lock acquire calls one client may make per second; `nil` lifts the limit.
        public var acquiresPerSecondPerClient: Int? = 10

        /// The reference's limits.
        public init() {}
    }
}
