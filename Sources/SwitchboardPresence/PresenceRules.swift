import SwitchboardCore

/// The checks presence requests pass before they touch the store, with the reference's codes.
enum PresenceRules {
    /// The key of a message or stream channel of `caller`'s app; `invalidChannelType` for any
    /// other type, `invalidChannelName` for a bad name.
    static func channel(_ address: ChannelAddress, of caller: Caller, limits: Limits, operation: String) throws(RtmError) -> ChannelKey {
        guard address.type == .message || address.type == .stream else {
            throw RtmError(.invalidChannelType, operation: operation, reason: "presence is kept for message and stream channels only")
        }
        try Validation.checkChannelName(address.name, limits: limits, operation: operation)
        return caller.channel(address.type, address.name)
    }

    /// Items to set (the rules the SDK also applies to states it keeps before joining).
    static func checkItems(_ items: [StateItem], limits: Limits) throws(RtmError) {
        try Validation.checkStateItems(items, limits: limits, operation: SetPresenceState.operation)
    }

    /// Keys to remove: each a valid key.
    static func checkKeys(_ keys: [String], limits: Limits) throws(RtmError) {
        for key in keys { try Validation.checkStateKey(key, limits: limits, operation: RemovePresenceState.operation) }
    }

    /// The users of a `getUserPresence`: at most `limits.presence.userQueryMaxUsers`, each a valid user id.
    static func checkUserIds(_ userIds: [UserID], limits: Limits) throws(RtmError) {
        let operation = GetUserPresence.operation
        guard userIds.count <= limits.presence.userQueryMaxUsers else {
            throw RtmError(
                .presenceInvalidArgument, operation: operation,
                reason: "\(userIds.count) user ids; at most \(limits.presence.userQueryMaxUsers)")
        }
        for userId in userIds { try Validation.checkUserId(userId, limits: limits, operation: operation) }
    }
}
