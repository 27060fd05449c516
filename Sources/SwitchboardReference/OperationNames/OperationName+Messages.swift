extension OperationName {
    /// Message channels and user channels.
    public enum Messages: String, OperationNameTable {
        /// `subscribe`.
        case subscribe
        /// `unsubscribe`.
        case unsubscribe
        /// `publish`, to a message channel or a user.
        case publish
    }
}
