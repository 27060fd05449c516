/// The cryptographic operations as pure, synchronous functions, safe to call from any thread.
///
/// `Crypto` is the module's face; these are what it (and the SDK's per-message hot path, which
/// cannot afford an actor hop per message) actually run. Every function is stateless: each call
/// creates and frees its own OpenSSL context, so there is nothing shared to race on.
public enum CryptoPrimitives {
    /// Length of an AES-GCM nonce, in bytes.
    public static let nonceByteCount = 12
    /// Length of an AES-GCM authentication tag, in bytes.
    public static let tagByteCount = 16
    /// Length of a SHA-256 digest (and so of an HMAC-SHA256), in bytes.
    public static let sha256ByteCount = 32
    /// Length of a SHA-1 digest, in bytes.
    public static let sha1ByteCount = 20
}

extension CryptoPrimitives {
    /// Calls `body` with a pointer that is never nil, even for an empty array, because several
    /// OpenSSL entry points reject a null pointer even when the length is zero.
    public static func withNonNullPointer<R>(
        _ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R
    ) -> R {
        if bytes.isEmpty {
            var placeholder: UInt8 = 0
            return withUnsafePointer(to: &placeholder) { body($0, 0) }
        }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
