import SwitchboardCryptography

/// A Lua script and its SHA-1, run with `EVALSHA` (falling back to `EVAL`, which loads it, when
/// the server does not know it yet: after a restart or `SCRIPT FLUSH`).
public struct RedisScript: Sendable, Hashable {
    /// The Lua source.
    public let source: String
    /// The SHA-1 of the source in lowercase hex, as Redis names the script.
    public let sha1: String

    /// The script of `source`.
    public init(_ source: String) {
        self.source = source
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in CryptoPrimitives.sha1(Array(source.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        self.sha1 = String(decoding: hex, as: UTF8.self)
    }
}
