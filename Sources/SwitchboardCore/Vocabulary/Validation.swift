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
        // Over the UTF-8 where it lies (nearly always), else over a copy.
        let problem =
            userId.utf8.withContiguousStorageIfAvailable { userIdProblem(UnsafeRawBufferPointer($0), maxBytes: maxBytes) }
            ?? Array(userId.utf8).withUnsafeBytes { userIdProblem($0, maxBytes: maxBytes) }
        switch problem {
        case nil: return
        case .empty: throw RtmError(.invalidUserId, operation: operation, reason: "user id is empty")
        case .tooLong(let count):
            throw RtmError(.invalidUserId, operation: operation, reason: "user id is \(count) bytes; at most \(maxBytes)")
        case .controlCharacter:
            throw RtmError(.invalidUserId, operation: operation, reason: "user id has a non-printable character")
        }
    }

    /// What is wrong with a user id given as its UTF-8 (see `checkUserId`), or nil when nothing
    /// is: the one rule, for a publish read in place as for any other request.
    public static func userIdProblem(_ utf8: UnsafeRawBufferPointer, maxBytes: Int) -> TextProblem? {
        guard !utf8.isEmpty else { return .empty }
        guard utf8.count <= maxBytes else { return .tooLong(utf8.count) }
        guard utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return .controlCharacter }
        return nil
    }

    /// What is wrong with a name, an id or a custom type.
    public enum TextProblem: Equatable, Sendable {
        /// It is empty.
        case empty
        /// It is longer than its limit: this long, in the limit's unit.
        case tooLong(Int)
        /// It has a control character (or, for a user id, a character that is not printable ASCII).
        case controlCharacter
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
        let problem =
            name.utf8.withContiguousStorageIfAvailable { nameProblem(UnsafeRawBufferPointer($0), maxLength: maxLength) }
            ?? Array(name.utf8).withUnsafeBytes { nameProblem($0, maxLength: maxLength) }
        switch problem {
        case nil: return
        case .empty: throw RtmError(code, operation: operation, reason: "\(noun) is empty")
        case .tooLong(let length):
            throw RtmError(code, operation: operation, reason: "\(noun) is \(length) characters; at most \(maxLength)")
        case .controlCharacter: throw RtmError(code, operation: operation, reason: "\(noun) has a control character")
        }
    }

    /// What is wrong with a name given as its valid UTF-8 (see `checkName`), or nil when nothing
    /// is.
    public static func nameProblem(_ utf8: UnsafeRawBufferPointer, maxLength: Int) -> TextProblem? {
        guard !utf8.isEmpty else { return .empty }
        let length = scalarCount(utf8)
        guard length <= maxLength else { return .tooLong(length) }
        // A control character is one UTF-8 byte; no byte of a longer character is below 0x80.
        guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return .controlCharacter }
        return nil
    }

    /// The Unicode scalars in valid UTF-8: each starts with one byte that is not a continuation.
    private static func scalarCount(_ utf8: UnsafeRawBufferPointer) -> Int {
        utf8.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }

    /// A custom type is at most `limits.messages.customTypeMaxLength` characters (Unicode scalars).
    @inlinable
    public static func checkCustomType(_ customType: String, limits: Limits, operation: String) throws(RtmError) {
        try checkCustomType(customType, maxLength: limits.messages.customTypeMaxLength, operation: operation)
    }

    /// A custom type is at most `maxLength` characters (Unicode scalars), else
    /// `channelCustomTypeLengthOverflow`, with no control characters, else `channelInvalidCustomType`.
    public static func checkCustomType(_ customType: String, maxLength: Int, operation: String) throws(RtmError) {
        let problem =
            customType.utf8.withContiguousStorageIfAvailable {
                customTypeProblem(UnsafeRawBufferPointer($0), maxLength: maxLength)
            } ?? Array(customType.utf8).withUnsafeBytes { customTypeProblem($0, maxLength: maxLength) }
        switch problem {
        case nil, .empty: return
        case .controlCharacter:
            throw RtmError(.channelInvalidCustomType, operation: operation, reason: "customType has a control character")
        case .tooLong(let length):
            throw RtmError(
                .channelCustomTypeLengthOverflow, operation: operation,
                reason: "customType is \(length) characters; at most \(maxLength)")
        }
    }

    /// What is wrong with a custom type given as its valid UTF-8 (see `checkCustomType`), or nil
    /// when nothing is (an empty one is none at all).
    public static func customTypeProblem(_ utf8: UnsafeRawBufferPointer, maxLength: Int) -> TextProblem? {
        // Control characters are single UTF-8 bytes, found without decoding; most publishes have
        // no custom type at all.
        guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return .controlCharacter }
        // A string has no more characters than UTF-8 bytes: within the limit in bytes, it is
        // within it in characters, without counting them (every publish checks this).
        if utf8.count <= maxLength { return nil }
        let length = scalarCount(utf8)
        return length <= maxLength ? nil : .tooLong(length)
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
