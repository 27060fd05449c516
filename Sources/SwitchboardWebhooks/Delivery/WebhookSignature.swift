import SwitchboardCore
import SwitchboardCryptography

/// The `X-Switchboard-Signature` of a delivery: `sha256=` and the lowercase hex of
/// HMAC-SHA256(secret, timestamp + "." + body), where the timestamp is the
/// `X-Switchboard-Timestamp` header (Unix seconds of the attempt). A receiver recomputes it and
/// compares in constant time; the timestamp lets it refuse an old delivery played again.
public enum WebhookSignature {
    /// The header's value for `body` sent at `timestamp` (Unix seconds) under `secret`.
    public static func header(secret: [UInt8], timestamp: UInt64, body: [UInt8]) -> String {
        let mac = CryptoPrimitives.hmacSHA256(key: secret, message: Array("\(timestamp).".utf8) + body)
        return "sha256=" + Hex.lowercase(mac)
    }
}
