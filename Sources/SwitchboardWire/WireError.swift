import SwitchboardCore

/// Why bytes could not be decoded as MessagePack or as a Switchboard frame.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The input ended inside a value.
        case truncated
        /// A declared string, binary, array or map length runs past the end of the input.
        case lengthExceedsInput(declared: Int, remaining: Int)
        /// The format byte `0xc1`, which MessagePack never uses.
        case reservedFormat(UInt8)
        /// A value of another type than the one expected.
        case typeMismatch(expected: String, found: String)
        /// An integer that does not fit the type it is read into.
        case integerOutOfRange(String)
        /// A string that is not valid UTF-8.
        case invalidUTF8
        /// Arrays and maps nested deeper than the limit.
        case nestingTooDeep(limit: Int)
        /// Bytes left after the one top-level value of a frame.
        case trailingBytes(Int)
        /// A map key that is not a string.
        case nonStringKey
        /// A required key is absent.
        case missingKey(String)
        /// The `"t"` value names no known message type.
        case unknownMessageType(String)
        /// A channel type raw value the operation does not accept.
        case invalidChannelType(Int)
        /// A value of the right type but not allowed here.
        case invalidValue(String)
    }

    /// What went wrong.
    public var kind: Kind
    /// Byte offset in the input where it was detected.
    public var offset: Int
    /// The request id, when it could be read before the failure (so the server can answer it).
    public var requestId: UInt32?
    /// The frame's `"t"` value, when it could be read.
    public var messageType: String?
    /// The map key whose value failed to decode, if any.
    public var key: String?

    /// Creates an error.
    public init(
        _ kind: Kind, offset: Int, requestId: UInt32? = nil, messageType: String? = nil,
        key: String? = nil
    ) {
        self.kind = kind
        self.offset = offset
        self.requestId = requestId
        self.messageType = messageType
        self.key = key
    }

    /// The reference error code a server answers this failure with.
    public var errorCode: RtmErrorCode {
        switch kind {
        case .invalidChannelType: .invalidChannelType
        // A message that is neither a string nor binary data.
        case .typeMismatch where key == FrameKey.message.rawValue: .channelInvalidMessage
        default: .invalidParameter
        }
    }

    /// What went wrong, without position or context.
    public var reason: String {
        switch kind {
        case .truncated: "input ends inside a value"
        case .lengthExceedsInput(let declared, let remaining):
            "declared length \(declared) exceeds the \(remaining) bytes left"
        case .reservedFormat(let byte): "reserved format byte 0x\(String(byte, radix: 16))"
        case .typeMismatch(let expected, let found): "expected \(expected), found \(found)"
        case .integerOutOfRange(let detail): "integer out of range: \(detail)"
        case .invalidUTF8: "string is not valid UTF-8"
        case .nestingTooDeep(let limit): "arrays and maps nested deeper than \(limit)"
        case .trailingBytes(let count): "\(count) bytes after the end of the frame"
        case .nonStringKey: "map key is not a string"
        case .missingKey(let name): "missing required key \"\(name)\""
        case .unknownMessageType(let name): "unknown message type \"\(name)\""
        case .invalidChannelType(let raw): "channel type \(raw) is not allowed here"
        case .invalidValue(let detail): detail
        }
    }

    public var description: String {
        var text = "wire error at byte \(offset)"
        if let messageType { text += " in \"\(messageType)\"" }
        if let requestId { text += " (request \(requestId))" }
        if let key { text += ", key \"\(key)\"" }
        return text + ": " + reason
    }
}
