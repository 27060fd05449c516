import SwitchboardWire

/// A small deterministic generator (SplitMix64) so robustness tests see the same inputs every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Lowercase hex without separators.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// Bytes from hex, ignoring spaces and newlines.
func bytes(hex text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Encodes a value tree.
func pack(_ value: MessagePackValue) -> [UInt8] { MessagePackWriter.encode(value) }

/// A map value with string keys, in the given order.
func map(_ pairs: KeyValuePairs<String, MessagePackValue>) -> MessagePackValue {
    .map(pairs.map { MessagePackPair(.string($0.key), $0.value) })
}

/// The error thrown by `body`, or nil if it did not throw.
func wireError<T>(_ body: () throws(WireError) -> T) -> WireError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
