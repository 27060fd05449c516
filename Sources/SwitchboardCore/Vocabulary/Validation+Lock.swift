extension Validation {
    /// A lock name is non-empty, at most `limits.locks.nameMaxLength` characters (Unicode scalars),
    /// no control characters; refused with `code` (`lockInvalidName`, or Storage's own code).
    public static func checkLockName(
        _ name: String, limits: Limits, operation: String, code: RtmErrorCode = .lockInvalidName
    ) throws(RtmError) {
        guard !name.isEmpty else { throw RtmError(code, operation: operation, reason: "lock name is empty") }
        let length = name.unicodeScalars.count
        guard length <= limits.locks.nameMaxLength else {
            throw RtmError(
                code, operation: operation, reason: "lock name is \(length) characters; at most \(limits.locks.nameMaxLength)")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RtmError(code, operation: operation, reason: "lock name has a control character")
        }
    }
}
