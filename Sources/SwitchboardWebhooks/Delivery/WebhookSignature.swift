import SwitchboardCryptography

/// The `X-Switchboard-Signature` of a delivery: `sha256=` and the lowercase hex of
/// HMAC-SHA256(secret, timestamp + "." + body), where the timestamp is the
/// `X-Switchboard-Timestamp` header (Unix seconds of the attempt). A receiver recomputes it and
/// compares in constant time; the timestamp lets it refuse an old delivery played again.
public enum WebhookSignature {
    /// The header's value for `body` sent at `timestamp` (Unix seconds) under `secret`.
    public static func header(secret: [UInt8], timestamp: UInt64, body: [UInt8]) -> String {
        let mac = CryptoPrimitives.hmacSHA256(key: secret, message: Array("\(timestamp).".utf8) + body)
        return "sha256=" + hex(mac)
    }

    /// `bytes` in lowercase hex.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
