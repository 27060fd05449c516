/// A cursor that reads MessagePack values from bytes without building a value tree.
///
/// Safe on hostile input: every read checks that the bytes it needs are there before touching
/// them or allocating for them, integers are range-checked, strings must be valid UTF-8, and
/// `readValue`/`skipValue` refuse nesting deeper than `maxDepth`. Every failure is a `WireError`.
public struct MessagePackReader<Bytes: RandomAccessCollection>
where Bytes.Element == UInt8, Bytes.Index == Int {
    /// The input.
    public let bytes: Bytes
    /// The index in `bytes` of the next byte to read.
    public var index: Int { position }
    @usableFromInline var position: Int
    /// How many arrays and maps `readValue` and `skipValue` accept nested in each other.
    public let maxDepth: Int

    /// Creates a reader at the start of `bytes`.
    @inlinable
    public init(_ bytes: Bytes, maxDepth: Int = Wire.maxNestingDepth) {
        self.bytes = bytes
        self.position = bytes.startIndex
        self.maxDepth = maxDepth
    }

    /// Bytes read so far.
    @inlinable
    public var offset: Int { position - bytes.startIndex }
    /// Bytes not yet read.
    @inlinable
    public var remaining: Int { bytes.endIndex - position }
    /// True when every byte has been read.
    @inlinable
    public var isAtEnd: Bool { position >= bytes.endIndex }

    /// The type of the next value, without reading it.
    @inlinable @inline(__always)
    public func peekType() throws(WireError) -> MessagePackType {
        MessagePackType(formatByte: try peekByte())
    }

    /// Reads a `nil`.
    @inlinable
    public mutating func readNil() throws(WireError) {
        guard try peekByte() == 0xc0 else { throw mismatch("nil") }
        position += 1
    }

    /// Reads a `nil` if one is next and tells whether it did.
    @inlinable
    public mutating func readNilIfPresent() throws(WireError) -> Bool {
        guard try peekByte() == 0xc0 else { return false }
        position += 1
        return true
    }

    /// Reads a boolean.
    @inlinable
    public mutating func readBool() throws(WireError) -> Bool {
        switch try peekByte() {
        case 0xc2: position += 1; return false
        case 0xc3: position += 1; return true
        default: throw mismatch("bool")
        }
    }

    /// Reads an integer in any MessagePack integer encoding, if its value fits `T`.
    @inlinable
    public mutating func readInteger<T: FixedWidthInteger>(_: T.Type = T.self) throws(WireError) -> T {
        let start = offset
        switch try readRawInteger() {
        case .unsigned(let value):
            if let result = T(exactly: value) { return result }
            throw WireError(.integerOutOfRange("\(value) does not fit \(T.self)"), offset: start)
        case .signed(let value):
            if let result = T(exactly: value) { return result }
            throw WireError(.integerOutOfRange("\(value) does not fit \(T.self)"), offset: start)
        }
    }

    /// Reads a float: float 32, float 64, or an integer that a `Double` holds exactly.
    @inlinable
    public mutating func readDouble() throws(WireError) -> Double {
        let start = offset
        switch try peekByte() {
        case 0xca:
            position += 1
            return Double(Float(bitPattern: try readBigEndian(UInt32.self)))
        case 0xcb:
            position += 1
            return Double(bitPattern: try readBigEndian(UInt64.self))
        default:
            guard try peekType() == .integer else { throw mismatch("float") }
            let raw = try readRawInteger()
            let result: Double? =
                switch raw {
                case .unsigned(let value): Double(exactly: value)
                case .signed(let value): Double(exactly: value)
                }
            guard let result else {
                throw WireError(.integerOutOfRange("not exactly representable as Double"), offset: start)
            }
            return result
        }
    }

    /// Reads a UTF-8 string.
    @inlinable
    public mutating func readString() throws(WireError) -> String {
        let range = try readStringRange()
        let text = bytes.withContiguousStorageIfAvailable { storage in
            Self.string(UnsafeBufferPointer(rebasing: storage[(range.lowerBound - bytes.startIndex)...].prefix(range.count)))
        }
        guard let text = text ?? UTF8Text.string(bytes[range]) else {
            throw WireError(.invalidUTF8, offset: range.lowerBound - bytes.startIndex)
        }
        return text
    }

    /// `utf8` as a string if it is valid UTF-8: on Linux checked once, many bytes at a time, and
    /// copied into the string without being checked again (`UTF8Span` needs macOS 26 / iOS 26, so
    /// Apple platforms take `UTF8Text`).
    @usableFromInline
    static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        #if os(Linux) && !SWITCHBOARD_PORTABLE
        guard let text = try? UTF8Span(validating: utf8.span) else { return nil }
        return String(copying: text)
        #else
        return UTF8Text.string(utf8)
        #endif
    }

    /// Reads a binary value.
    @inlinable
    public mutating func readBinary() throws(WireError) -> [UInt8] {
        let range = try readBinaryRange()
        // Copied in one piece from memory the input lies in (nearly always).
        let copied = bytes.withContiguousStorageIfAvailable { storage in
            [UInt8](UnsafeBufferPointer(rebasing: storage[(range.lowerBound - bytes.startIndex)...].prefix(range.count)))
        }
        return copied ?? [UInt8](bytes[range])
    }

    /// Reads an array header and returns how many values follow.
    @inlinable
    public mutating func readArrayHeader() throws(WireError) -> Int {
        let start = offset
        let count: Int
        switch try peekByte() {
        case let byte where byte & 0xf0 == 0x90: position += 1; count = Int(byte & 0x0f)
        case 0xdc: position += 1; count = Int(try readBigEndian(UInt16.self))
        case 0xdd: position += 1; count = Int(try readBigEndian(UInt32.self))
        default: throw mismatch("array")
        }
        // Every value takes at least one byte.
        guard count <= remaining else {
            throw WireError(.lengthExceedsInput(declared: count, remaining: remaining), offset: start)
        }
        return count
    }

    /// Reads a map header and returns how many key-value entries follow.
    @inlinable @inline(__always)
    public mutating func readMapHeader() throws(WireError) -> Int {
        let start = offset
        let count: Int
        switch try peekByte() {
        case let byte where byte & 0xf0 == 0x80: position += 1; count = Int(byte & 0x0f)
        case 0xde: position += 1; count = Int(try readBigEndian(UInt16.self))
        case 0xdf: position += 1; count = Int(try readBigEndian(UInt32.self))
        default: throw mismatch("map")
        }
        // Every key and every value takes at least one byte.
        guard count <= remaining / 2 else {
            throw WireError(.lengthExceedsInput(declared: count, remaining: remaining), offset: start)
        }
        return count
    }

    /// Reads an extension value.
    @inlinable
    public mutating func readExtension() throws(WireError) -> (type: Int8, data: [UInt8]) {
        let (type, range) = try readExtensionRange()
        return (type, [UInt8](bytes[range]))
    }

    /// Reads any value as a tree.
    @inlinable
    public mutating func readValue() throws(WireError) -> MessagePackValue {
        try readValue(depth: 0)
    }

    /// Steps over the next value, however nested (up to `maxDepth`), without keeping it.
    ///
    /// Strings inside are not checked for valid UTF-8.
    @inlinable
    public mutating func skipValue() throws(WireError) {
        try skipValue(depth: 0)
    }
}

// MARK: - Internals

extension MessagePackReader {
    /// Most elements reserved ahead for one array or map; larger ones grow as they are read.
    @usableFromInline
    static var reservationLimit: Int { 256 }

    @usableFromInline
    enum RawInteger {
        case unsigned(UInt64)
        case signed(Int64)
    }

    @inlinable @inline(__always)
    func peekByte() throws(WireError) -> UInt8 {
        guard position < bytes.endIndex else { throw WireError(.truncated, offset: offset) }
        return bytes[position]
    }

    @inlinable
    func mismatch(_ expected: String) -> WireError {
        let found = position < bytes.endIndex ? MessagePackType(formatByte: bytes[position]).description : "end of input"
        return WireError(.typeMismatch(expected: expected, found: found), offset: offset)
    }

    @inlinable @inline(__always)
    mutating func readBigEndian<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(WireError) -> T {
        let size = T.bitWidth / 8
        guard remaining >= size else { throw WireError(.truncated, offset: offset) }
        var value: T = 0
        for position in position..<(position + size) {
            value = value << 8 | T(bytes[position])
        }
        position += size
        return value
    }

    /// Advances over `count` bytes and returns their position range.
    @inlinable @inline(__always)
    mutating func take(_ count: Int, declaredAt start: Int) throws(WireError) -> Range<Int> {
        guard count <= remaining else {
            throw WireError(.lengthExceedsInput(declared: count, remaining: remaining), offset: start)
        }
        defer { position += count }
        return position..<(position + count)
    }

    @inlinable
    mutating func readRawInteger() throws(WireError) -> RawInteger {
        let byte = try peekByte()
        switch byte {
        case 0x00...0x7f: position += 1; return .unsigned(UInt64(byte))
        case 0xe0...0xff: position += 1; return .signed(Int64(Int8(bitPattern: byte)))
        case 0xcc: position += 1; return .unsigned(UInt64(try readBigEndian(UInt8.self)))
        case 0xcd: position += 1; return .unsigned(UInt64(try readBigEndian(UInt16.self)))
        case 0xce: position += 1; return .unsigned(UInt64(try readBigEndian(UInt32.self)))
        case 0xcf: position += 1; return .unsigned(try readBigEndian(UInt64.self))
        case 0xd0: position += 1; return .signed(Int64(Int8(bitPattern: try readBigEndian(UInt8.self))))
        case 0xd1: position += 1; return .signed(Int64(Int16(bitPattern: try readBigEndian(UInt16.self))))
        case 0xd2: position += 1; return .signed(Int64(Int32(bitPattern: try readBigEndian(UInt32.self))))
        case 0xd3: position += 1; return .signed(Int64(bitPattern: try readBigEndian(UInt64.self)))
        default: throw mismatch("integer")
        }
    }

    @inlinable @inline(__always)
    mutating func readStringRange() throws(WireError) -> Range<Int> {
        let start = offset
        let count: Int
        switch try peekByte() {
        case let byte where byte & 0xe0 == 0xa0: position += 1; count = Int(byte & 0x1f)
        case 0xd9: position += 1; count = Int(try readBigEndian(UInt8.self))
        case 0xda: position += 1; count = Int(try readBigEndian(UInt16.self))
        case 0xdb: position += 1; count = Int(try readBigEndian(UInt32.self))
        default: throw mismatch("string")
        }
        return try take(count, declaredAt: start)
    }

    @inlinable
    mutating func readBinaryRange() throws(WireError) -> Range<Int> {
        let start = offset
        let count: Int
        switch try peekByte() {
        case 0xc4: position += 1; count = Int(try readBigEndian(UInt8.self))
        case 0xc5: position += 1; count = Int(try readBigEndian(UInt16.self))
        case 0xc6: position += 1; count = Int(try readBigEndian(UInt32.self))
        default: throw mismatch("binary")
        }
        return try take(count, declaredAt: start)
    }

    @inlinable
    mutating func readExtensionRange() throws(WireError) -> (type: Int8, data: Range<Int>) {
        let start = offset
        let count: Int
        switch try peekByte() {
        case 0xd4: position += 1; count = 1
        case 0xd5: position += 1; count = 2
        case 0xd6: position += 1; count = 4
        case 0xd7: position += 1; count = 8
        case 0xd8: position += 1; count = 16
        case 0xc7: position += 1; count = Int(try readBigEndian(UInt8.self))
        case 0xc8: position += 1; count = Int(try readBigEndian(UInt16.self))
        case 0xc9: position += 1; count = Int(try readBigEndian(UInt32.self))
        default: throw mismatch("ext")
        }
        let type = Int8(bitPattern: try readBigEndian(UInt8.self))
        return (type, try take(count, declaredAt: start))
    }

    @inlinable
    mutating func enterContainer(depth: Int) throws(WireError) {
        guard depth < maxDepth else { throw WireError(.nestingTooDeep(limit: maxDepth), offset: offset) }
    }

    @inlinable
    mutating func readValue(depth: Int) throws(WireError) -> MessagePackValue {
        let byte = try peekByte()
        switch MessagePackType(formatByte: byte) {
        case .nil: position += 1; return .nil
        case .bool: return .bool(try readBool())
        case .integer:
            switch try readRawInteger() {
            case .unsigned(let value): return .uint(value)
            case .signed(let value): return value >= 0 ? .uint(UInt64(value)) : .int(value)
            }
        case .float:
            position += 1
            if byte == 0xca { return .float(Float(bitPattern: try readBigEndian(UInt32.self))) }
            return .double(Double(bitPattern: try readBigEndian(UInt64.self)))
        case .string: return .string(try readString())
        case .binary: return .binary(try readBinary())
        case .ext:
            let (type, data) = try readExtension()
            return .ext(type: type, data: data)
        case .array:
            try enterContainer(depth: depth)
            let count = try readArrayHeader()
            var items: [MessagePackValue] = []
            // A declared count is only bounded by the input's length, and each nesting level may
            // declare as many again: reserve little up front so nesting cannot multiply it.
            items.reserveCapacity(Swift.min(count, Self.reservationLimit))
            for _ in 0..<count { items.append(try readValue(depth: depth + 1)) }
            return .array(items)
        case .map:
            try enterContainer(depth: depth)
            let count = try readMapHeader()
            var pairs: [MessagePackPair] = []
            pairs.reserveCapacity(Swift.min(count, Self.reservationLimit))
            for _ in 0..<count {
                let key = try readValue(depth: depth + 1)
                pairs.append(MessagePackPair(key, try readValue(depth: depth + 1)))
            }
            return .map(pairs)
        case .reserved:
            throw WireError(.reservedFormat(byte), offset: offset)
        }
    }

    @inlinable
    mutating func skipValue(depth: Int) throws(WireError) {
        let byte = try peekByte()
        switch MessagePackType(formatByte: byte) {
        case .nil, .bool: position += 1
        case .integer: _ = try readRawInteger()
        case .float:
            position += 1
            _ = try take(byte == 0xca ? 4 : 8, declaredAt: offset - 1)
        case .string: _ = try readStringRange()
        case .binary: _ = try readBinaryRange()
        case .ext: _ = try readExtensionRange()
        case .array:
            try enterContainer(depth: depth)
            for _ in 0..<(try readArrayHeader()) { try skipValue(depth: depth + 1) }
        case .map:
            try enterContainer(depth: depth)
            for _ in 0..<(try readMapHeader()) {
                try skipValue(depth: depth + 1)
                try skipValue(depth: depth + 1)
            }
        case .reserved:
            throw WireError(.reservedFormat(byte), offset: offset)
        }
    }
}

extension MessagePackValue {
    /// Decodes exactly one value that spans all of `bytes`.
    @inlinable
    public static func decode<Bytes: RandomAccessCollection>(
        _ bytes: Bytes, maxDepth: Int = Wire.maxNestingDepth
    ) throws(WireError) -> MessagePackValue where Bytes.Element == UInt8, Bytes.Index == Int {
        var reader = MessagePackReader(bytes, maxDepth: maxDepth)
        let value = try reader.readValue()
        guard reader.isAtEnd else {
            throw WireError(.trailingBytes(reader.remaining), offset: reader.offset)
        }
        return value
    }
}
