/// Bytes from a hex string (whitespace ignored); traps on bad input, which is fine in tests.
func hex(_ string: String) -> [UInt8] {
    let digits = Array(string.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd hex length")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Lowercase hex of `bytes`.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
