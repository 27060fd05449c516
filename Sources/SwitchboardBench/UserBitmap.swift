/// A set of small non-negative numbers, one bit each: benchmark users (the load generator names
/// them `<letter><n>-<tag>`, as in `u17-k3x9`) or writes a client has heard of.
public struct UserBitmap: Sendable, Equatable {
    private var words: [UInt64]
    /// Numbers in the set.
    public private(set) var count = 0

    /// An empty set with room for `0..<capacity` (it grows past that when needed).
    public init(capacity: Int) {
        words = Array(repeating: 0, count: (max(capacity, 0) + 63) / 64)
    }

    /// Adds `number`; false when it was there already or is negative.
    @discardableResult
    public mutating func insert(_ number: Int) -> Bool {
        guard number >= 0 else { return false }
        if number / 64 >= words.count { words += Array(repeating: 0, count: max(number / 64 + 1 - words.count, words.count)) }
        let bit: UInt64 = 1 << UInt64(number % 64)
        guard words[number / 64] & bit == 0 else { return false }
        words[number / 64] |= bit
        count += 1
        return true
    }

    /// Whether `number` is in the set.
    public func contains(_ number: Int) -> Bool {
        number >= 0 && number / 64 < words.count && words[number / 64] & (1 << UInt64(number % 64)) != 0
    }

    /// Adds every number of `other`.
    public mutating func formUnion(_ other: UserBitmap) {
        if other.words.count > words.count { words += Array(repeating: 0, count: other.words.count - words.count) }
        count = 0
        for index in words.indices {
            if index < other.words.count { words[index] |= other.words[index] }
            count += words[index].nonzeroBitCount
        }
    }

    /// The number in a user id `<letter><digits>-…` (or `<letter><digits>`); nil for any other id.
    public static func number(of userId: UnsafeRawBufferPointer) -> Int? {
        guard userId.count >= 2 else { return nil }
        var value = 0
        var digits = 0
        for byte in userId.dropFirst() {
            if byte == UInt8(ascii: "-") { break }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The number in `userId`, as `number(of:)` reads it from bytes.
    public static func number(of userId: String) -> Int? {
        var utf8 = Array(userId.utf8)
        return utf8.withUnsafeMutableBytes { number(of: UnsafeRawBufferPointer($0)) }
    }
}
