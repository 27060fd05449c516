extension Limits {
    /// The names and ids every feature checks (`limits.names`).
    public struct Names: Sendable, Hashable {
        /// Longest channel name, in characters.
        public var channelNameMaxLength = 64
        /// Longest user id, in bytes.
        public var userIdMaxBytes = 64

        /// The reference's limits.
        public init() {}
    }
}
