extension OperationName {
    /// Presence.
    public enum Presence: String, OperationNameTable {
        /// `whoNow` (`getOnlineUsers`).
        case whoNow
        /// `whereNow` (`getUserChannels`).
        case whereNow
        /// `setState`.
        case setState
        /// `getState`.
        case getState
        /// `removeState`.
        case removeState
        /// `getUserPresence`.
        case getUserPresence
    }
}
