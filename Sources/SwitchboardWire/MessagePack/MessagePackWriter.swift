/// Appends MessagePack values to a byte buffer, always in the smallest encoding.
public struct MessagePackWriter: Sendable {
    /// The bytes written so far.
    public var bytes: [UInt8]

    /// Creates a writer whose buffer has room for `capacity` bytes before it grows.
    public init(reservingCapacity capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Creates a writer that writes into `buffer`'s storage (taking it, emptied, with room for
    /// `capacity` bytes); give the bytes back from `bytes` when done.
    public init(reusing buffer: inout [UInt8], reservingCapacity capacity: Int) {
        bytes = []
        swap(&bytes, &buffer)
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(capacity)
    }

    /// Writes `nil`.
    public mutating func writeNil() { bytes.append(0xc0) }

    /// Writes a boolean.
    public mutating func writeBool(_ value: Bool) { bytes.append(value ? 0xc3 : 0xc2) }

    /// Writes a non-negative integer (positive fixint or uint 8/16/32/64).
    public mutating func writeUInt(_ value: UInt64) {
        switch value {
        case 0...0x7f: bytes.append(UInt8(value))
        case 0x80...0xff: bytes.append(0xcc); bytes.append(UInt8(value))
        case 0x100...0xffff: bytes.append(0xcd); appendBigEndian(UInt16(value))
        case 0x1_0000...0xffff_ffff: bytes.append(0xce); appendBigEndian(UInt32(value))
        default: bytes.append(0xcf); appendBigEndian(value)
        }
    }

    /// Writes a signed integer: non-negative values as `writeUInt`, negative ones as negative
    /// fixint or int 8/16/32/64.
    public mutating func writeInt(_ value: Int64) {
        if value >= 0 { return writeUInt(UInt64(value)) }
        switch value {
        case -32 ... -1: bytes.append(UInt8(truncatingIfNeeded: value))
        case -0x80 ... -33: bytes.append(0xd0); bytes.append(UInt8(truncatingIfNeeded: value))
        case -0x8000 ... -0x81:
            bytes.append(0xd1); appendBigEndian(UInt16(truncatingIfNeeded: value))
        case -0x8000_0000 ... -0x8001:
            bytes.append(0xd2); appendBigEndian(UInt32(truncatingIfNeeded: value))
        default: bytes.append(0xd3); appendBigEndian(UInt64(bitPattern: value))
        }
    }

    /// Writes any integer in the smallest encoding that holds it.
    public mutating func writeInteger<T: BinaryInteger>(_ value: T) {
        if value < 0 {
            writeInt(Int64(value))
        } else {
            writeUInt(UInt64(value))
        }
    }

    /// Writes a 32-bit float.
    public mutating func writeFloat(_ value: Float) {
        bytes.append(0xca)
        appendBigEndian(value.bitPattern)
    }

    /// Writes a 64-bit float.
    public mutating func writeDouble(_ value: Double) {
        bytes.append(0xcb)
        appendBigEndian(value.bitPattern)
    }

    /// Writes a string as UTF-8 (fixstr or str 8/16/32).
    public mutating func writeString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeLengthHeader(utf8.count, fix: 0xa0, fixLimit: 31, formats: (0xd9, 0xda, 0xdb))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Writes raw bytes (bin 8/16/32).
    public mutating func writeBinary<Bytes: Collection<UInt8>>(_ value: Bytes) {
        writeLengthHeader(value.count, fix: nil, fixLimit: -1, formats: (0xc4, 0xc5, 0xc6))
        bytes.append(contentsOf: value)
    }

    /// Writes the header of an array of `count` values; the values follow.
    public mutating func writeArrayHeader(_ count: Int) {
        writeLengthHeader(count, fix: 0x90, fixLimit: 15, formats: (nil, 0xdc, 0xdd))
    }

    /// Writes the header of a map of `count` entries; keys and values follow alternately.
    public mutating func writeMapHeader(_ count: Int) {
        writeLengthHeader(count, fix: 0x80, fixLimit: 15, formats: (nil, 0xde, 0xdf))
    }

    /// Writes an extension value (fixext 1/2/4/8/16 or ext 8/16/32).
    public mutating func writeExtension(type: Int8, data: [UInt8]) {
        switch data.count {
        case 1: bytes.append(0xd4)
        case 2: bytes.append(0xd5)
        case 4: bytes.append(0xd6)
        case 8: bytes.append(0xd7)
        case 16: bytes.append(0xd8)
        default: writeLengthHeader(data.count, fix: nil, fixLimit: -1, formats: (0xc7, 0xc8, 0xc9))
        }
        bytes.append(UInt8(bitPattern: type))
        bytes.append(contentsOf: data)
    }

    /// Writes a whole value tree.
    public mutating func writeValue(_ value: MessagePackValue) {
        switch value {
        case .nil: writeNil()
        case .bool(let flag): writeBool(flag)
        case .int(let number): writeInt(number)
        case .uint(let number): writeUInt(number)
        case .float(let number): writeFloat(number)
        case .double(let number): writeDouble(number)
        case .string(let text): writeString(text)
        case .binary(let data): writeBinary(data)
        case .array(let items):
            writeArrayHeader(items.count)
            for item in items { writeValue(item) }
        case .map(let pairs):
            writeMapHeader(pairs.count)
            for pair in pairs {
                writeValue(pair.key)
                writeValue(pair.value)
            }
        case .ext(let type, let data): writeExtension(type: type, data: data)
        }
    }

    /// Encodes one value tree.
    public static func encode(_ value: MessagePackValue) -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeValue(value)
        return writer.bytes
    }

    private mutating func writeLengthHeader(
        _ count: Int, fix: UInt8?, fixLimit: Int, formats: (UInt8?, UInt8, UInt8)
    ) {
        precondition(count >= 0 && count <= Int(UInt32.max), "MessagePack length out of range")
        if let fix, count <= fixLimit {
            bytes.append(fix | UInt8(count))
        } else if let format8 = formats.0, count <= 0xff {
            bytes.append(format8)
            bytes.append(UInt8(count))
        } else if count <= 0xffff {
            bytes.append(formats.1)
            appendBigEndian(UInt16(count))
        } else {
            bytes.append(formats.2)
            appendBigEndian(UInt32(count))
        }
    }

    private mutating func appendBigEndian<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        var shift = T.bitWidth - 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }
}
