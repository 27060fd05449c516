/// Deterministic pseudo-random numbers (SplitMix64), so robustness tests see the same inputs on
/// every run and a failure reproduces.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Starts the sequence at `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number below `bound` (which must be above zero). Slightly biased toward small
    /// numbers when `bound` is not a power of two, which no test here minds.
    public mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// `count` random bytes in `range`, eight from each number (cheaper in a debug build than
    /// `UInt8.random` a byte at a time). Slightly biased when the range is not all 256 values.
    public mutating func bytes(count: Int, in range: ClosedRange<UInt8> = 0...255) -> [UInt8] {
        let span = Int(range.upperBound) - Int(range.lowerBound) + 1
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            while index < count {
                var word = next()
                let end = min(index + 8, count)
                while index < end {
                    buffer[index] = range.lowerBound &+ UInt8(truncatingIfNeeded: Int(word & 0xFF) % span)
                    word >>= 8
                    index += 1
                }
            }
            initialized = count
        }
    }
}
