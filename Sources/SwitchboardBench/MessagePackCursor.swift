import Glibc

/// A bounds-checked reading position in MessagePack bytes.
struct MessagePackCursor {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    struct Text {
        let bytes: UnsafeRawBufferPointer
        let range: Range<Int>

        /// The text's bytes.
        var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

        func equals(_ literal: StaticString) -> Bool {
            guard range.count == literal.utf8CodeUnitCount else { return false }
            let expected = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
            return range.count == 0 || memcmp(bytes.baseAddress! + range.lowerBound, expected.baseAddress!, range.count) == 0
        }
    }

    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bigEndian(_ width: Int) -> UInt64? {
        guard bytes.count - position >= width else { return nil }
        var value: UInt64 = 0
        for offset in 0..<width { value = value << 8 | UInt64(bytes[position + offset]) }
        position += width
        return value
    }

    mutating func take(_ count: UInt64) -> Range<Int>? {
        guard count <= UInt64(bytes.count - position) else { return nil }
        defer { position += Int(count) }
        return position..<(position + Int(count))
    }

    mutating func mapHeader() -> Int? { header(fixed: 0x80, 0xde, 0xdf) }

    mutating func arrayHeader() -> Int? { header(fixed: 0x90, 0xdc, 0xdd) }

    /// The count of a map or array header: `fixed` plus up to 15, or a 16- or 32-bit count.
    private mutating func header(fixed: UInt8, _ format16: UInt8, _ format32: UInt8) -> Int? {
        guard let format = byte() else { return nil }
        switch format {
        case fixed...(fixed | 0x0f): return Int(format & 0x0f)
        case format16: return bigEndian(2).map { Int($0) }
        case format32: return bigEndian(4).map { Int($0) }
        default: return nil
        }
    }

    /// Reads a map whose keys are strings, handing each key to `read`, which reads (or skips) its
    /// value; false on malformed input or when `read` returns false.
    mutating func readMap(_ read: (Text, inout MessagePackCursor) -> Bool) -> Bool {
        guard let fields = mapHeader() else { return false }
        for _ in 0..<fields {
            guard let key = string(), read(key, &self) else { return false }
        }
        return true
    }

    /// A request id: an unsigned integer that fits 32 bits.
    mutating func requestId() -> UInt32? {
        guard let id = unsigned(), id <= UInt64(UInt32.max) else { return nil }
        return UInt32(id)
    }

    /// Reads a string value equal to `literal`; false for anything else.
    mutating func expect(_ literal: StaticString) -> Bool { string()?.equals(literal) ?? false }

    mutating func string() -> Text? {
        guard let format = byte() else { return nil }
        let length: UInt64?
        switch format {
        case 0xa0...0xbf: length = UInt64(format & 0x1f)
        case 0xd9: length = bigEndian(1)
        case 0xda: length = bigEndian(2)
        case 0xdb: length = bigEndian(4)
        default: return nil
        }
        guard let length, let range = take(length) else { return nil }
        return Text(bytes: bytes, range: range)
    }

    /// The range of a binary value; leaves the position alone if the next value is not one.
    mutating func binary() -> Range<Int>? {
        let start = position
        guard let format = byte() else { return nil }
        let length: UInt64?
        switch format {
        case 0xc4: length = bigEndian(1)
        case 0xc5: length = bigEndian(2)
        case 0xc6: length = bigEndian(4)
        default: length = nil
        }
        guard let length, let range = take(length) else {
            position = start
            return nil
        }
        return range
    }

    mutating func bool() -> Bool? {
        switch byte() {
        case 0xc3?: return true
        case 0xc2?: return false
        default: return nil
        }
    }

    /// A signed or unsigned integer that fits an `Int64`.
    mutating func integer() -> Int64? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case 0xe0...0xff:
            position += 1
            return Int64(Int8(bitPattern: bytes[position - 1]))
        case 0xd0...0xd3:
            let width = 1 << Int(bytes[position] - 0xd0)
            position += 1
            guard let raw = bigEndian(width) else { return nil }
            let shift = UInt64(64 - 8 * width)
            return Int64(bitPattern: raw << shift) >> Int64(shift)
        default:
            guard let value = unsigned(), value <= UInt64(Int64.max) else { return nil }
            return Int64(value)
        }
    }

    mutating func unsigned() -> UInt64? {
        guard let format = byte() else { return nil }
        switch format {
        case 0x00...0x7f: return UInt64(format)
        case 0xcc: return bigEndian(1)
        case 0xcd: return bigEndian(2)
        case 0xce: return bigEndian(4)
        case 0xcf: return bigEndian(8)
        default: return nil
        }
    }

    /// Skips one value of any type; false on malformed input or nesting deeper than 32.
    mutating func skip(depth: Int) -> Bool {
        guard depth < 32, let format = byte() else { return false }
        var length: UInt64?
        var children: UInt64 = 0
        switch format {
        case 0x00...0x7f, 0xe0...0xff, 0xc0, 0xc2, 0xc3: return true
        case 0x80...0x8f: children = UInt64(format & 0x0f) * 2
        case 0x90...0x9f: children = UInt64(format & 0x0f)
        case 0xa0...0xbf: length = UInt64(format & 0x1f)
        case 0xc4, 0xd9: length = bigEndian(1)
        case 0xc5, 0xda: length = bigEndian(2)
        case 0xc6, 0xdb: length = bigEndian(4)
        case 0xc7: length = bigEndian(1).map { $0 + 1 }
        case 0xc8: length = bigEndian(2).map { $0 + 1 }
        case 0xc9: length = bigEndian(4).map { $0 + 1 }
        case 0xca: length = 4
        case 0xcb: length = 8
        case 0xcc, 0xd0: length = 1
        case 0xcd, 0xd1: length = 2
        case 0xce, 0xd2: length = 4
        case 0xcf, 0xd3: length = 8
        case 0xd4: length = 2
        case 0xd5: length = 3
        case 0xd6: length = 5
        case 0xd7: length = 9
        case 0xd8: length = 17
        case 0xdc: guard let count = bigEndian(2) else { return false }; children = count
        case 0xdd: guard let count = bigEndian(4) else { return false }; children = count
        case 0xde: guard let count = bigEndian(2) else { return false }; children = count * 2
        case 0xdf: guard let count = bigEndian(4) else { return false }; children = count * 2
        default: return false
        }
        if let length { return take(length) != nil }
        guard children <= UInt64(bytes.count - position) else { return false }
        for _ in 0..<children {
            guard skip(depth: depth + 1) else { return false }
        }
        return true
    }
}
