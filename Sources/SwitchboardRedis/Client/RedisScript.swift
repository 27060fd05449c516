import SwitchboardCryptography
import SwitchboardReference

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
        self.sha1 = Hex.lowercase(CryptoPrimitives.sha1(Array(source.utf8)))
    }
}
