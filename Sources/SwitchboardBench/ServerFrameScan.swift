import Glibc

/// What a load generator needs from a server frame, read in place without decoding it: a
/// `message` push's payload timestamp, or an answer's id and outcome.
///
/// It walks the MessagePack map comparing key bytes where they lie, so a delivery costs no
/// allocation and no string building; anything it does not expect makes it `.other`.
public enum ServerFrameScan: Equatable, Sendable {
    /// A `message` push whose body is binary and starts with a `PayloadStamp` timestamp.
    case message(timestamp: UInt64)
    /// `ok` or `loginOk` answering request `id`.
    case ok(id: UInt32)
    /// `error` answering request `id`.
    case error(id: UInt32)
    /// Any other frame (including a message whose body carries no timestamp).
    case other

    /// Scans one MessagePack-encoded server frame.
    public init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { Self.scan($0) ?? .other }
    }

    private enum FrameType { case message, ok, error, other }

    private static func scan(_ bytes: UnsafeRawBufferPointer) -> ServerFrameScan? {
        var cursor = Cursor(bytes: bytes)
        guard let fields = cursor.mapHeader() else { return nil }
        var type = FrameType.other
        var id: UInt32?
        var timestamp: UInt64?
        for _ in 0..<fields {
            guard let key = cursor.string() else { return nil }
            if key.equals("t") {
                guard let value = cursor.string() else { return nil }
                type =
                    value.equals("message") ? .message
                    : value.equals("ok") || value.equals("loginOk") ? .ok
                    : value.equals("error") ? .error : .other
            } else if key.equals("id") {
                guard let value = cursor.unsigned(), value <= UInt64(UInt32.max) else { return nil }
                id = UInt32(value)
            } else if key.equals("message"), let body = cursor.binary() {
                if body.count >= PayloadStamp.timestampBytes {
                    timestamp = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: body.lowerBound, as: UInt64.self))
                }
            } else {
                guard cursor.skip(depth: 0) else { return nil }
            }
            // What the generator needs is known: leave the remaining fields unread.
            if type == .message && timestamp != nil { break }
            if (type == .ok || type == .error) && id != nil { break }
        }
        switch (type, id, timestamp) {
        case (.message, _, let timestamp?): return .message(timestamp: timestamp)
        case (.ok, let id?, _): return .ok(id: id)
        case (.error, let id?, _): return .error(id: id)
        default: return .other
        }
    }

    /// A bounds-checked reading position in MessagePack bytes.
    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        struct Text {
            let bytes: UnsafeRawBufferPointer
            let range: Range<Int>

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

        mutating func mapHeader() -> Int? {
            guard let format = byte() else { return nil }
            switch format {
            case 0x80...0x8f: return Int(format & 0x0f)
            case 0xde: return bigEndian(2).map { Int($0) }
            case 0xdf: return bigEndian(4).map { Int($0) }
            default: return nil
            }
        }

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
}
