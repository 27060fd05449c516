extension OperationName {
    /// The server's own calls on the bus, which no client makes and the reference has no method
    /// for: its API's (the method names where the API has one) and its counts for `info` and
    /// `/metrics`. The API's other methods carry out the features' operations and report theirs.
    public enum Server: String, OperationNameTable {
        /// Ending every session of a user (the API's `disconnect`).
        case disconnect
        /// Listing a user's sessions (the API's `sessions`).
        case sessions
        /// Listing the channels in use (the API's `channels`).
        case channels
        /// A module's counts of its state (sessions, channels and members, locks).
        case statistics
        /// The storage module's counts of its writes.
        case storageStatistics
        /// This node's status (the API's `info`, the cluster's beat).
        case nodeStatus
    }
}
