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

    /// Reads an unsigned integer field into an `Int`, clamping values above `Int.max` (the
    /// server clamps such requested durations into their ranges anyway).
    mutating func readClampedCount() throws(WireError) -> Int {
        let start = offset
        switch try readRawInteger() {
        case .unsigned(let value): return Int(clamping: value)
        case .signed(let value):
            guard value >= 0 else {
                throw WireError(.integerOutOfRange("\(value) is negative; expected an unsigned integer"), offset: start)
            }
            return Int(value)
        }
    }

    /// Reads an array of `{channelType, channel}` maps.
    mutating func readChannelAddresses() throws(WireError) -> [ChannelAddress] {
        let count = try readArrayHeader()
        var addresses: [ChannelAddress] = []
        addresses.reserveCapacity(min(count, 256))
        for _ in 0..<count {
            let start = offset
            let fields = try readMapHeader()
            var type: RtmChannelType?
            var name: String?
            for _ in 0..<fields {
                switch try readFrameKey() {
                case .channelType?: type = try readChannelType(allowed: ChannelTypes.named)
                case .channel?: name = try readString()
                default: try skipValue()
                }
            }
            guard let type, let name else {
                throw WireError(.invalidValue("a lost channel needs channelType and channel"), offset: start)
            }
            addresses.append(ChannelAddress(type, name))
        }
        return addresses
    }

    /// Reads an array, each element with `element`.
    mutating func readArray<Element>(_ element: (inout Self) throws(WireError) -> Element) throws(WireError) -> [Element] {
        let count = try readArrayHeader()
        var elements: [Element] = []
        elements.reserveCapacity(min(count, 256))
        for _ in 0..<count { elements.append(try element(&self)) }
        return elements
    }

    /// Reads an array of strings.
    mutating func readStrings() throws(WireError) -> [String] {
        try readArray { reader throws(WireError) in try reader.readString() }
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
    mutating func readChannelType(allowed: ChannelTypes) throws(WireError) -> RtmChannelType {
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

    /// Writes an array of `{channelType, channel}` maps.
    mutating func writeChannelAddresses(_ addresses: [ChannelAddress]) {
        writeArrayHeader(addresses.count)
        for address in addresses {
            writeMapHeader(2)
            writeKey(.channelType); writeInt(Int64(address.type.rawValue))
            writeKey(.channel); writeString(address.name)
        }
    }

    /// Writes an array of strings.
    mutating func writeStrings(_ strings: [String]) {
        writeArrayHeader(strings.count)
        for string in strings { writeString(string) }
    }

}

extension MessagePackOutput {
    /// Writes a message body: a string as str, bytes as bin.
    mutating func writePayload(_ payload: MessagePayload) {
        switch payload {
        case .string(let text): writeString(text)
        case .binary(let bytes): writeBinary(bytes)
        }
    }
}

/// A set of channel types as one bit per raw value: checked on every publish, so without
/// hashing and without a lazily made global.
struct ChannelTypes {
    private let bits: UInt8

    init(_ first: RtmChannelType, _ second: RtmChannelType, _ third: RtmChannelType? = nil) {
        bits = 1 << first.rawValue | 1 << second.rawValue | (third.map { 1 << $0.rawValue } ?? 0)
    }

    func contains(_ type: RtmChannelType) -> Bool { bits & 1 << type.rawValue != 0 }

    /// What a publish may target: a message channel or a user.
    static var publishable: ChannelTypes { ChannelTypes(.message, .user) }
    /// Every type that names a channel.
    static var named: ChannelTypes { ChannelTypes(.message, .stream, .user) }
}
