extension Validation {
    /// Presence state items to set: at least one, each key once, at most
    /// `limits.presence.statesPerUser` of them, every key and value within its limit.
    public static func checkStateItems(_ items: [StateItem], limits: Limits, operation: String) throws(RtmError) {
        guard !items.isEmpty else {
            throw RtmError(.presenceInvalidArgument, operation: operation, reason: "no state items given")
        }
        guard items.count <= limits.presence.statesPerUser else {
            throw RtmError(
                .presenceStateCountOverflow, operation: operation,
                reason: "\(items.count) items; at most \(limits.presence.statesPerUser)")
        }
        var seen = Set<String>()
        for item in items {
            try checkStateKey(item.key, limits: limits, operation: operation)
            guard seen.insert(item.key).inserted else {
                throw RtmError(.presenceStateDuplicateKey, operation: operation, reason: "key \(item.key.debugDescription) is given twice")
            }
            let bytes = item.value.utf8.count
            guard bytes <= limits.presence.stateValueMaxBytes else {
                throw RtmError(
                    .presenceStateValueSizeOverflow, operation: operation,
                    reason: "the value of \(item.key.debugDescription) is \(bytes) bytes; at most \(limits.presence.stateValueMaxBytes)")
            }
        }
    }

    /// A presence state key is non-empty, has no control character, and is at most
    /// `limits.presence.stateKeyMaxLength` characters (Unicode scalars).
    public static func checkStateKey(_ key: String, limits: Limits, operation: String) throws(RtmError) {
        guard !key.isEmpty, !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RtmError(
                .presenceInvalidStateKey, operation: operation, reason: "state key \(key.debugDescription) is empty or has a control character")
        }
        let length = key.unicodeScalars.count
        guard length <= limits.presence.stateKeyMaxLength else {
            throw RtmError(
                .presenceStateKeySizeOverflow, operation: operation,
                reason: "state key is \(length) characters; at most \(limits.presence.stateKeyMaxLength)")
        }
    }

    /// A whole presence state of one user in one channel: at most `limits.presence.statesPerUser` keys and
    /// `limits.presence.stateMaxBytes` of keys and values.
    public static func checkWholeState(_ states: [String: String], limits: Limits, operation: String) throws(RtmError) {
        guard states.count <= limits.presence.statesPerUser else {
            throw RtmError(
                .presenceStateCountOverflow, operation: operation,
                reason: "the state would have \(states.count) keys; at most \(limits.presence.statesPerUser)")
        }
        let bytes = PresenceSize.content(of: states)
        guard bytes <= limits.presence.stateMaxBytes else {
            throw RtmError(
                .presenceStateValueSizeOverflow, operation: operation,
                reason: "the state would take \(bytes) bytes; at most \(limits.presence.stateMaxBytes)")
        }
    }
}
