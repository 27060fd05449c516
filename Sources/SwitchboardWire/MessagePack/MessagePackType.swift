/// The type family of a MessagePack value, as its first byte tells.
public enum MessagePackType: Sendable, Hashable, CustomStringConvertible {
    case `nil`, bool, integer, float, string, binary, array, map, ext
    /// The byte `0xc1`, which MessagePack never uses.
    case reserved

    /// The type family the format byte `byte` starts. (Inlined: a reader asking whether the next
    /// value is a string then tests the byte's range, not a chain of them.)
    @inlinable @inline(__always)
    public init(formatByte byte: UInt8) {
        switch byte {
        case 0x00...0x7f, 0xe0...0xff, 0xcc...0xd3: self = .integer
        case 0x80...0x8f, 0xde, 0xdf: self = .map
        case 0x90...0x9f, 0xdc, 0xdd: self = .array
        case 0xa0...0xbf, 0xd9...0xdb: self = .string
        case 0xc0: self = .nil
        case 0xc2, 0xc3: self = .bool
        case 0xc4...0xc6: self = .binary
        case 0xc7...0xc9, 0xd4...0xd8: self = .ext
        case 0xca, 0xcb: self = .float
        default: self = .reserved
        }
    }

    public var description: String {
        switch self {
        case .nil: "nil"
        case .bool: "bool"
        case .integer: "integer"
        case .float: "float"
        case .string: "string"
        case .binary: "binary"
        case .array: "array"
        case .map: "map"
        case .ext: "ext"
        case .reserved: "reserved byte 0xc1"
        }
    }
}
