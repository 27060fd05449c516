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

    /// Items to set: at least one, each key once, at most `presenceStatesPerUser` of them, every
    /// key and value within its limit.
    static func checkItems(_ items: [StateItem], limits: Limits) throws(RtmError) {
        let operation = SetPresenceState.operation
        guard !items.isEmpty else {
            throw RtmError(.presenceInvalidArgument, operation: operation, reason: "no state items given")
        }
        guard items.count <= limits.presenceStatesPerUser else {
            throw RtmError(
                .presenceStateCountOverflow, operation: operation,
                reason: "\(items.count) items; at most \(limits.presenceStatesPerUser)")
        }
        var seen = Set<String>()
        for item in items {
            try checkKey(item.key, limits: limits, operation: operation)
            guard seen.insert(item.key).inserted else {
                throw RtmError(.presenceStateDuplicateKey, operation: operation, reason: "key \(item.key.debugDescription) is given twice")
            }
            let bytes = item.value.utf8.count
            guard bytes <= limits.presenceStateValueMaxBytes else {
                throw RtmError(
                    .presenceStateValueSizeOverflow, operation: operation,
                    reason: "the value of \(item.key.debugDescription) is \(bytes) bytes; at most \(limits.presenceStateValueMaxBytes)")
            }
        }
    }

    /// Keys to remove: each a valid key.
    static func checkKeys(_ keys: [String], limits: Limits) throws(RtmError) {
        for key in keys { try checkKey(key, limits: limits, operation: RemovePresenceState.operation) }
    }

    /// A key is non-empty, has no control character, and is at most `presenceStateKeyMaxLength`
    /// characters (Unicode scalars).
    static func checkKey(_ key: String, limits: Limits, operation: String) throws(RtmError) {
        guard !key.isEmpty, !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RtmError(.presenceInvalidStateKey, operation: operation, reason: "state key \(key.debugDescription) is empty or has a control character")
        }
        let length = key.unicodeScalars.count
        guard length <= limits.presenceStateKeyMaxLength else {
            throw RtmError(
                .presenceStateKeySizeOverflow, operation: operation,
                reason: "state key is \(length) characters; at most \(limits.presenceStateKeyMaxLength)")
        }
    }

    /// The users of a `getUserPresence`: at most `presenceUserQueryMaxUsers`, each a valid user id.
    static func checkUserIds(_ userIds: [UserID], limits: Limits) throws(RtmError) {
        let operation = GetUserPresence.operation
        guard userIds.count <= limits.presenceUserQueryMaxUsers else {
            throw RtmError(
                .presenceInvalidArgument, operation: operation,
                reason: "\(userIds.count) user ids; at most \(limits.presenceUserQueryMaxUsers)")
        }
        for userId in userIds { try Validation.checkUserId(userId, limits: limits, operation: operation) }
    }
}
