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

    /// A user list given to `subscribeTopic` or `unsubscribeTopic` (nil: every publisher) names
    /// at least one valid user id; an empty list, or one in which no entry is a user id, is
    /// `channelInvalidUserList` (-11011). Some invalid entries among valid ones are the call's
    /// `failedUsers` instead.
    static func checkUserList(_ users: [UserID]?, limits: Limits, operation: String) throws(RtmError) {
        guard let users else { return }
        guard !users.isEmpty else {
            throw RtmError(.channelInvalidUserList, operation: operation, reason: "the user list is empty; give none for every publisher")
        }
        guard users.contains(where: { (try? Validation.checkUserId($0, limits: limits, operation: operation)) != nil }) else {
            throw RtmError(.channelInvalidUserList, operation: operation, reason: "no entry of the user list is a valid user id")
        }
    }
}
