/// Checks of names and ids against the limits, shared by every module so they refuse alike.
public enum Validation {
    /// A user id is non-empty, at most `limits.names.userIdMaxBytes` bytes, printable ASCII.
    @inlinable
    public static func checkUserId(_ userId: String, limits: Limits, operation: String) throws(RtmError) {
        // Inlined, so a caller reads the one limit without copying them all (half a kilobyte).
        try checkUserId(userId, maxBytes: limits.names.userIdMaxBytes, operation: operation)
    }

    /// A user id is non-empty, at most `maxBytes` bytes, printable ASCII.
    public static func checkUserId(_ userId: String, maxBytes: Int, operation: String) throws(RtmError) {
        let bytes = userId.utf8
        guard !bytes.isEmpty else {
            throw RtmError(.invalidUserId, operation: operation, reason: "user id is empty")
        }
        guard bytes.count <= maxBytes else {
            throw RtmError(
                .invalidUserId, operation: operation,
                reason: "user id is \(bytes.count) bytes; at most \(maxBytes)")
        }
        func printable(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }
        // Over the UTF-8 where it lies (nearly always), else byte by byte.
        guard bytes.withContiguousStorageIfAvailable({ $0.allSatisfy(printable) }) ?? bytes.allSatisfy(printable) else {
            throw RtmError(.invalidUserId, operation: operation, reason: "user id has a non-printable character")
        }
    }

    /// A channel name is non-empty, at most `limits.names.channelNameMaxLength` characters (Unicode
    /// scalars, so the byte size is bounded too), no control characters.
    @inlinable
    public static func checkChannelName(_ name: String, limits: Limits, operation: String) throws(RtmError) {
        try checkChannelName(name, maxLength: limits.names.channelNameMaxLength, operation: operation)
    }

    /// A channel name is non-empty, at most `maxLength` characters, no control characters.
    public static func checkChannelName(_ name: String, maxLength: Int, operation: String) throws(RtmError) {
        try checkName(name, "channel name", maxLength: maxLength, code: .invalidChannelName, operation: operation)
    }

    /// A name (`noun` in the reason) is non-empty, at most `maxLength` Unicode scalars, with no
    /// control characters; else `code`.
    public static func checkName(
        _ name: String, _ noun: String, maxLength: Int, code: RtmErrorCode, operation: String
    ) throws(RtmError) {
        guard !name.isEmpty else {
            throw RtmError(code, operation: operation, reason: "\(noun) is empty")
        }
        let length = name.unicodeScalars.count
        guard length <= maxLength else {
            throw RtmError(code, operation: operation, reason: "\(noun) is \(length) characters; at most \(maxLength)")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RtmError(code, operation: operation, reason: "\(noun) has a control character")
        }
    }

    /// A custom type is at most `limits.messages.customTypeMaxLength` characters (Unicode scalars).
    @inlinable
    public static func checkCustomType(_ customType: String, limits: Limits, operation: String) throws(RtmError) {
        try checkCustomType(customType, maxLength: limits.messages.customTypeMaxLength, operation: operation)
    }

    /// A custom type is at most `maxLength` characters (Unicode scalars), else
    /// `channelCustomTypeLengthOverflow`, with no control characters, else `channelInvalidCustomType`.
    public static func checkCustomType(_ customType: String, maxLength: Int, operation: String) throws(RtmError) {
        // Control characters are single UTF-8 bytes, found without decoding; most publishes have
        // no custom type at all.
        guard !customType.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw RtmError(.channelInvalidCustomType, operation: operation, reason: "customType has a control character")
        }
        // A string has no more characters than UTF-8 bytes: within the limit in bytes, it is
        // within it in characters, without counting them (every publish checks this).
        if customType.utf8.count <= maxLength { return }
        let length = customType.unicodeScalars.count
        guard length <= maxLength else {
            throw RtmError(
                .channelCustomTypeLengthOverflow, operation: operation,
                reason: "customType is \(length) characters; at most \(maxLength)")
        }
    }

    /// Compares two secrets in time that depends only on their lengths.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
