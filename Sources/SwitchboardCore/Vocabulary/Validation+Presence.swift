extension Validation {
    /// Presence state items to set: at least one, each key once, at most
    /// `presenceStatesPerUser` of them, every key and value within its limit.
    public static func checkStateItems(_ items: [StateItem], limits: Limits, operation: String) throws(RtmError) {
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
            try checkStateKey(item.key, limits: limits, operation: operation)
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

    /// A presence state key is non-empty, has no control character, and is at most
    /// `presenceStateKeyMaxLength` characters (Unicode scalars).
    public static func checkStateKey(_ key: String, limits: Limits, operation: String) throws(RtmError) {
        guard !key.isEmpty, !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RtmError(
                .presenceInvalidStateKey, operation: operation, reason: "state key \(key.debugDescription) is empty or has a control character")
        }
        let length = key.unicodeScalars.count
        guard length <= limits.presenceStateKeyMaxLength else {
            throw RtmError(
                .presenceStateKeySizeOverflow, operation: operation,
                reason: "state key is \(length) characters; at most \(limits.presenceStateKeyMaxLength)")
        }
    }

    /// A whole presence state of one user in one channel: at most `presenceStatesPerUser` keys and
    /// `presenceStateMaxBytes` of keys and values.
    public static func checkWholeState(_ states: [String: String], limits: Limits, operation: String) throws(RtmError) {
        guard states.count <= limits.presenceStatesPerUser else {
            throw RtmError(
                .presenceStateCountOverflow, operation: operation,
                reason: "the state would have \(states.count) keys; at most \(limits.presenceStatesPerUser)")
        }
        let bytes = PresenceSize.content(of: states)
        guard bytes <= limits.presenceStateMaxBytes else {
            throw RtmError(
                .presenceStateValueSizeOverflow, operation: operation,
                reason: "the state would take \(bytes) bytes; at most \(limits.presenceStateMaxBytes)")
        }
    }
}
