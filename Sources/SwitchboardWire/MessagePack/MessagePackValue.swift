/// One MessagePack value as a tree; the frame codecs use the reader and writer directly instead.
///
/// The reader yields `.uint` for every non-negative integer and `.int` for every negative one,
/// whichever encoding carried it.
public enum MessagePackValue: Sendable, Hashable {
    /// `nil` (0xc0).
    case `nil`
    /// `true` or `false`.
    case bool(Bool)
    /// A negative integer (or any signed value given to the writer).
    case int(Int64)
    /// A non-negative integer.
    case uint(UInt64)
    /// A 32-bit float.
    case float(Float)
    /// A 64-bit float.
    case double(Double)
    /// A UTF-8 string.
    case string(String)
    /// Raw bytes.
    case binary([UInt8])
    /// An array.
    case array([MessagePackValue])
    /// A map, keys and values in wire order.
    case map([MessagePackPair])
    /// An extension value: an application type tag and its bytes.
    case ext(type: Int8, data: [UInt8])

    /// The value of the first entry whose key is the string `key`, if this is a map.
    public subscript(key: String) -> MessagePackValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .string(key) }?.value
    }

    /// The integer value, if this is an integer that fits `Int64`.
    public var int64Value: Int64? {
        switch self {
        case .int(let value): value
        case .uint(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The string value, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }
}

/// One key-value entry of a MessagePack map.
public struct MessagePackPair: Sendable, Hashable {
    /// The key.
    public var key: MessagePackValue
    /// The value.
    public var value: MessagePackValue
    /// Creates an entry.
    public init(_ key: MessagePackValue, _ value: MessagePackValue) {
        self.key = key
        self.value = value
    }
}
