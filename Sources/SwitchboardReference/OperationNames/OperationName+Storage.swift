extension OperationName {
    /// Channel and user metadata.
    public enum Storage: String, OperationNameTable {
        /// `setChannelMetadata`.
        case setChannelMetadata
        /// `updateChannelMetadata`.
        case updateChannelMetadata
        /// `removeChannelMetadata`.
        case removeChannelMetadata
        /// `getChannelMetadata`.
        case getChannelMetadata
        /// `setUserMetadata`.
        case setUserMetadata
        /// `updateUserMetadata`.
        case updateUserMetadata
        /// `removeUserMetadata`.
        case removeUserMetadata
        /// `getUserMetadata`.
        case getUserMetadata
        /// `subscribeUserMetadata`.
        case subscribeUserMetadata
        /// `unsubscribeUserMetadata`.
        case unsubscribeUserMetadata
    }
}
