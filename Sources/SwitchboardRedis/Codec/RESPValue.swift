/// One reply or push from a Redis server, in RESP2 or RESP3.
///
/// RESP2 has simple strings, errors, integers, bulk strings and arrays (a null bulk string or a
/// null array is `.null`); RESP3 adds null, booleans, doubles, big numbers, bulk errors, verbatim
/// strings, maps, sets and out-of-band pushes. Attributes (`|`) are read and dropped: they annotate
/// the reply that follows and no command we send asks for them.
public enum RESPValue: Sendable, Hashable {
    /// `+OK`: a short status line.
    case simpleString(String)
    /// `-ERR …` or `!…`: an error reply, its first word the error kind.
    case error(String)
    /// `:42`.
    case integer(Int64)
    /// `$5\r\nhello`: bytes, binary-safe.
    case bulkString([UInt8])
    /// `*…`: an ordered list.
    case array([RESPValue])
    /// `_`, a null bulk string (`$-1`) or a null array (`*-1`).
    case null
    /// `#t` / `#f`.
    case boolean(Bool)
    /// `,3.14` (also `inf`, `-inf`, `nan`).
    case double(Double)
    /// `(12345678901234567890`: an integer too large for 64 bits, as its digits.
    case bigNumber(String)
    /// `=15\r\ntxt:Some string`: text with a three-letter format.
    case verbatim(format: String, text: String)
    /// `%…`: key-value pairs in the order sent.
    case map([RESPPair])
    /// `~…`: an unordered collection, in the order sent.
    case set([RESPValue])
    /// `>…`: an out-of-band push (a pub/sub message on a RESP3 connection).
    case push([RESPValue])

    /// The text of a simple, bulk or verbatim string; nil for other values.
    public var string: String? {
        switch self {
        case .simpleString(let text): text
        case .bulkString(let bytes): String(decoding: bytes, as: UTF8.self)
        case .verbatim(_, let text): text
        default: nil
        }
    }

    /// The value of an integer reply; nil for other values.
    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The elements of an array, set or push; nil for other values.
    public var elements: [RESPValue]? {
        switch self {
        case .array(let values), .set(let values), .push(let values): values
        default: nil
        }
    }
}

/// A key and its value in a RESP3 map.
public struct RESPPair: Sendable, Hashable {
    /// The key.
    public var key: RESPValue
    /// The value.
    public var value: RESPValue
    /// Creates a pair.
    public init(_ key: RESPValue, _ value: RESPValue) {
        self.key = key
        self.value = value
    }
}
