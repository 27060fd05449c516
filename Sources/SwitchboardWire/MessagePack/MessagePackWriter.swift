/// Where MessagePack values are written: a growing byte array (`MessagePackWriter`) or a buffer
/// of known size (`MessagePackBufferWriter`). The encodings are written once, here, for both.
public protocol MessagePackOutput {
    /// Appends one byte.
    mutating func append(_ byte: UInt8)
    /// Appends `bytes`.
    mutating func append(contentsOf bytes: UnsafeRawBufferPointer)
}

extension MessagePackOutput {
    /// Appends the bytes of `collection`.
    mutating func append<Bytes: Collection<UInt8>>(contentsOf collection: Bytes) {
        if collection.withContiguousStorageIfAvailable({ append(contentsOf: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in collection { append(byte) }
        }
    }

    /// Writes `nil`.
    public mutating func writeNil() { append(0xc0) }

    /// Writes a boolean.
    public mutating func writeBool(_ value: Bool) { append(value ? 0xc3 : 0xc2) }

    /// Writes a non-negative integer (positive fixint or uint 8/16/32/64).
    public mutating func writeUInt(_ value: UInt64) {
        switch value {
        case 0...0x7f: append(UInt8(value))
        case 0x80...0xff: append(0xcc); append(UInt8(value))
        case 0x100...0xffff: append(0xcd); appendBigEndian(UInt16(value))
        case 0x1_0000...0xffff_ffff: append(0xce); appendBigEndian(UInt32(value))
        default: append(0xcf); appendBigEndian(value)
        }
    }

    /// Writes a signed integer: non-negative values as `writeUInt`, negative ones as negative
    /// fixint or int 8/16/32/64.
    public mutating func writeInt(_ value: Int64) {
        if value >= 0 { return writeUInt(UInt64(value)) }
        switch value {
        case -32 ... -1: append(UInt8(truncatingIfNeeded: value))
        case -0x80 ... -33: append(0xd0); append(UInt8(truncatingIfNeeded: value))
        case -0x8000 ... -0x81:
            append(0xd1); appendBigEndian(UInt16(truncatingIfNeeded: value))
        case -0x8000_0000 ... -0x8001:
            append(0xd2); appendBigEndian(UInt32(truncatingIfNeeded: value))
        default: append(0xd3); appendBigEndian(UInt64(bitPattern: value))
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
        append(0xca)
        appendBigEndian(value.bitPattern)
    }

    /// Writes a 64-bit float.
    public mutating func writeDouble(_ value: Double) {
        append(0xcb)
        appendBigEndian(value.bitPattern)
    }

    /// Writes a string as UTF-8 (fixstr or str 8/16/32).
    public mutating func writeString(_ value: String) {
        // Read in place (a copy of the string to call `withUTF8` on costs a retain and a release).
        guard value.utf8.withContiguousStorageIfAvailable({ writeString(utf8: $0) }) == nil else { return }
        var contiguous = value
        contiguous.withUTF8 { writeString(utf8: $0) }
    }

    /// Writes a string given as its UTF-8 bytes.
    private mutating func writeString(utf8: UnsafeBufferPointer<UInt8>) {
        writeString(utf8: UnsafeRawBufferPointer(utf8))
    }

    /// Writes a string given as its UTF-8 bytes (valid UTF-8, which this does not check).
    public mutating func writeString(utf8: UnsafeRawBufferPointer) {
        writeLengthHeader(utf8.count, fix: 0xa0, fixLimit: 31, formats: (0xd9, 0xda, 0xdb))
        append(contentsOf: utf8)
    }

    /// Writes raw bytes (bin 8/16/32).
    public mutating func writeBinary<Bytes: Collection<UInt8>>(_ value: Bytes) {
        writeLengthHeader(value.count, fix: nil, fixLimit: -1, formats: (0xc4, 0xc5, 0xc6))
        append(contentsOf: value)
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
        case 1: append(0xd4)
        case 2: append(0xd5)
        case 4: append(0xd6)
        case 8: append(0xd7)
        case 16: append(0xd8)
        default: writeLengthHeader(data.count, fix: nil, fixLimit: -1, formats: (0xc7, 0xc8, 0xc9))
        }
        append(UInt8(bitPattern: type))
        append(contentsOf: data)
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

    mutating func writeLengthHeader(
        _ count: Int, fix: UInt8?, fixLimit: Int, formats: (UInt8?, UInt8, UInt8)
    ) {
        precondition(count >= 0 && count <= Int(UInt32.max), "MessagePack length out of range")
        if let fix, count <= fixLimit {
            append(fix | UInt8(count))
        } else if let format8 = formats.0, count <= 0xff {
            append(format8)
            append(UInt8(count))
        } else if count <= 0xffff {
            append(formats.1)
            appendBigEndian(UInt16(count))
        } else {
            append(formats.2)
            appendBigEndian(UInt32(count))
        }
    }

    mutating func appendBigEndian<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        var shift = T.bitWidth - 8
        while shift >= 0 {
            append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }
}

/// Appends MessagePack values to a byte buffer, always in the smallest encoding.
public struct MessagePackWriter: Sendable, MessagePackOutput {
    /// The bytes written so far.
    public var bytes: [UInt8]

    /// Creates a writer whose buffer has room for `capacity` bytes before it grows.
    public init(reservingCapacity capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func append(_ byte: UInt8) { bytes.append(byte) }

    public mutating func append(contentsOf bytes: UnsafeRawBufferPointer) { self.bytes.append(contentsOf: bytes) }

    /// Encodes one value tree.
    public static func encode(_ value: MessagePackValue) -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeValue(value)
        return writer.bytes
    }
}

/// Writes MessagePack values into memory the caller provides and sized beforehand: no growth,
/// no reference counting, no copy afterwards (a push is encoded straight into its frame).
/// Writing past the end is a programming error and stops the process.
public struct MessagePackBufferWriter: MessagePackOutput {
    private let buffer: UnsafeMutableRawBufferPointer
    /// Bytes written so far, from the start of the buffer.
    public private(set) var count = 0

    /// A writer at the start of `buffer`.
    public init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        precondition(count < buffer.count, "MessagePack output past its buffer")
        buffer[count] = byte
        count += 1
    }

    @inline(__always)
    public mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= buffer.count - count, "MessagePack output past its buffer")
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        let target = buffer.baseAddress! + count
        if bytes.count <= 32 {
            // Keys, names and ids are short: a few word copies beat a call to memmove.
            Self.copyShort(from: source, to: target, count: bytes.count)
        } else {
            target.copyMemory(from: source, byteCount: bytes.count)
        }
        count += bytes.count
    }

    /// Copies `count` bytes, 1 to 32, with at most four 8-byte loads and stores (overlapping
    /// ones when `count` is not a multiple of 8) or, below 8, 4-byte and single ones.
    @inline(__always)
    private static func copyShort(from source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, count: Int) {
        func copy<Word: FixedWidthInteger>(_: Word.Type, at offset: Int) {
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: offset, as: Word.self), toByteOffset: offset, as: Word.self)
        }
        switch count {
        case 16...:
            copy(UInt64.self, at: 0)
            copy(UInt64.self, at: 8)
            copy(UInt64.self, at: count - 16)
            copy(UInt64.self, at: count - 8)
        case 8...:
            copy(UInt64.self, at: 0)
            copy(UInt64.self, at: count - 8)
        case 4...:
            copy(UInt32.self, at: 0)
            copy(UInt32.self, at: count - 4)
        default:
            for offset in 0..<count { copy(UInt8.self, at: offset) }
        }
    }
}

/// How many bytes a value takes as the writers above write it (always the smallest encoding),
/// so a frame can be given memory of its exact size before it is written.
public enum MessagePackSize {
    /// A non-negative integer (`writeUInt`, and `writeInt` of one).
    @inlinable
    public static func uint(_ value: UInt64) -> Int {
        switch value {
        case 0...0x7f: 1
        case 0x80...0xff: 2
        case 0x100...0xffff: 3
        case 0x1_0000...0xffff_ffff: 5
        default: 9
        }
    }

    /// A string of `utf8Count` bytes (`writeString`).
    public static func string(utf8Count: Int) -> Int { lengthHeader(utf8Count, fixLimit: 31, has8: true) + utf8Count }

    /// Raw bytes, `count` of them (`writeBinary`).
    public static func binary(count: Int) -> Int { lengthHeader(count, fixLimit: -1, has8: true) + count }

    /// The header of a map of `count` entries (`writeMapHeader`).
    public static func mapHeader(_ count: Int) -> Int { lengthHeader(count, fixLimit: 15, has8: false) }

    /// `writeLengthHeader`'s size: a fix form up to `fixLimit`, then 8 (if the format has one),
    /// 16 or 32 bits of length after the format byte.
    private static func lengthHeader(_ count: Int, fixLimit: Int, has8: Bool) -> Int {
        if count <= fixLimit { 1 } else if has8 && count <= 0xff { 2 } else if count <= 0xffff { 3 } else { 5 }
    }
}
