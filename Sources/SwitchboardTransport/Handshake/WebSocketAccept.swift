import Foundation
import SwitchboardCryptography

/// The `Sec-WebSocket-Accept` computation of RFC 6455 section 4.2.2.
public enum WebSocketAccept {
    /// The GUID every accept key is derived with.
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// base64(SHA-1(key + GUID)) for the client's `Sec-WebSocket-Key`.
    public static func value(forKey key: String) -> String {
        Data(CryptoPrimitives.sha1(Array((key + guid).utf8))).base64EncodedString()
    }

    /// A fresh random `Sec-WebSocket-Key` (16 random bytes, base64).
    public static func randomKey() -> String {
        Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString()
    }

    /// True when `key` is base64 of exactly 16 bytes.
    public static func isValidKey(_ key: String) -> Bool {
        Data(base64Encoded: key)?.count == 16
    }
}
