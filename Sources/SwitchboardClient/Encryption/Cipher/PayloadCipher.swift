/// AES-GCM, PBKDF2-HMAC-SHA256 and secure random bytes: what sealed payloads need from a
/// platform's cryptography. `PlatformCipher` is the one this platform has: OpenSSL on Linux,
/// CryptoKit and CommonCrypto on Apple platforms. The same test vectors hold for both.
protocol PayloadCipher {
    /// `ciphertext || 16-byte tag` of `plaintext` under `key` (16 or 32 bytes) and a 12-byte
    /// `nonce`, with no associated data.
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws(CipherFailure) -> [UInt8]

    /// The plaintext of what `seal` made; throws when the key or nonce differ or a byte changed.
    static func open(_ ciphertextAndTag: [UInt8], key: [UInt8], nonce: [UInt8]) throws(CipherFailure) -> [UInt8]

    /// PBKDF2-HMAC-SHA256 of `password` and `salt`, `keyByteCount` bytes long.
    static func pbkdf2SHA256(
        password: [UInt8], salt: [UInt8], iterations: Int, keyByteCount: Int
    ) throws(CipherFailure) -> [UInt8]

    /// `count` bytes from a cryptographically secure generator.
    static func randomBytes(count: Int) -> [UInt8]
}

/// Why a cipher operation failed.
struct CipherFailure: Error, Sendable, Equatable {
    /// What went wrong, for the error's reason.
    var reason: String

    init(_ reason: String) { self.reason = reason }
}
