import SwitchboardCore

extension MessagePackReader {
    /// Reads an unsigned integer field into an `Int`.
    mutating func readCount() throws(WireError) -> Int {
        let start = offset
        let value = try readInteger(Int.self)
        guard value >= 0 else {
            throw WireError(.integerOutOfRange("\(value) is negative; expected an unsigned integer"), offset: start)
        }
        return value
    }

    /// Reads a message body: a string stays a string, binary stays binary.
    mutating func readPayload() throws(WireError) -> MessagePayload {
        switch try peekType() {
        case .string: return .string(try readString())
        case .binary: return .binary(try readBinary())
        default: throw mismatch("string or binary")
        }
    }

    /// Reads a channel type and checks that it is one of `allowed`.
    mutating func readChannelType(allowed: Set<RtmChannelType>) throws(WireError) -> RtmChannelType {
        let start = offset
        let raw = try readInteger(Int.self)
        guard let type = RtmChannelType(rawValue: raw), allowed.contains(type) else {
            throw WireError(.invalidChannelType(raw), offset: start)
        }
        return type
    }
}

extension MessagePackWriter {
    /// Writes a non-negative count; negative values are written as 0.
    mutating func writeCount(_ value: Int) { writeUInt(UInt64(max(0, value))) }

    /// Writes a message body: a string as str, bytes as bin.
    mutating func writePayload(_ payload: MessagePayload) {
        switch payload {
        case .string(let text): writeString(text)
        case .binary(let bytes): writeBinary(bytes)
        }
    }
}

/// The channel-type sets fields accept.
enum ChannelTypes {
    /// What a publish may target: a message channel or a user.
    static let publishable: Set<RtmChannelType> = [.message, .user]
    /// Every type that names a channel.
    static let named: Set<RtmChannelType> = [.message, .stream, .user]
}
