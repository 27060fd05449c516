extension OperationName {
    /// Stream channels and their topics.
    public enum Stream: String, OperationNameTable {
        /// `createStreamChannel` (the SDK's own checks).
        case createStreamChannel
        /// `join` of a stream channel.
        case join
        /// `leave` of a stream channel.
        case leave
        /// `renewToken` of a stream channel.
        case renewToken
        /// `joinTopic`.
        case joinTopic
        /// `leaveTopic`.
        case leaveTopic
        /// `publishTopicMessage`.
        case publishTopicMessage
        /// `subscribeTopic`.
        case subscribeTopic
        /// `unsubscribeTopic`.
        case unsubscribeTopic
    }
}
