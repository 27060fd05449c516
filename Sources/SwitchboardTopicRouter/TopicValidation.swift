import SwitchboardCore

/// Checks of topic names and publisher meta against the limits.
enum TopicValidation {
    /// A topic name is 1 to `limits.streams.topicNameMaxLength` characters (Unicode scalars), with no
    /// control characters; else `channelInvalidTopicName`.
    static func checkTopic(_ topic: String, limits: Limits, operation: String) throws(RtmError) {
        try Validation.checkName(
            topic, "topic name", maxLength: limits.streams.topicNameMaxLength, code: .channelInvalidTopicName, operation: operation)
    }

    /// A publisher's meta is at most `limits.streams.topicMetaMaxBytes` UTF-8 bytes; else `channelInvalidTopicMeta`.
    static func checkMeta(_ meta: String, limits: Limits, operation: String) throws(RtmError) {
        let size = meta.utf8.count
        guard size <= limits.streams.topicMetaMaxBytes else {
            throw RtmError(
                .channelInvalidTopicMeta, operation: operation,
                reason: "meta is \(size) bytes; at most \(limits.streams.topicMetaMaxBytes)")
        }
    }
}
