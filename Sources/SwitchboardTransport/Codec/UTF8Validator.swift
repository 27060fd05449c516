/// Incremental UTF-8 validator that can be fed a message piece by piece and fails at the first
/// byte that cannot start or continue a valid sequence.
public struct UTF8Validator: Sendable {
    private var remaining = 0
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Creates a validator positioned at a character boundary.
    public init() {}

    /// True when the bytes fed so far end on a character boundary.
    public var isAtBoundary: Bool { remaining == 0 }

    /// Feeds `bytes`; returns false as soon as the input can no longer be valid UTF-8.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where !step(byte) { return false }
        return true
    }

    /// Feeds `bytes`; returns false as soon as the input can no longer be valid UTF-8.
    public mutating func feed(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Returns true when `bytes` is complete, valid UTF-8.
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        var validator = UTF8Validator()
        return validator.feed(bytes) && validator.isAtBoundary
    }

    @inline(__always)
    private mutating func step(_ byte: UInt8) -> Bool {
        if remaining == 0 {
            switch byte {
            case 0x00...0x7F: return true
            case 0xC2...0xDF: begin(1, 0x80, 0xBF)
            case 0xE0: begin(2, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: begin(2, 0x80, 0xBF)
            case 0xED: begin(2, 0x80, 0x9F)
            case 0xF0: begin(3, 0x90, 0xBF)
            case 0xF1...0xF3: begin(3, 0x80, 0xBF)
            case 0xF4: begin(3, 0x80, 0x8F)
            default: return false
            }
            return true
        }
        guard byte >= lower && byte <= upper else { return false }
        remaining -= 1
        lower = 0x80
        upper = 0xBF
        return true
    }

    private mutating func begin(_ count: Int, _ low: UInt8, _ high: UInt8) {
        remaining = count
        lower = low
        upper = high
    }
}
