import SwitchboardCore

/// The sealed-payload format of docs/PROTOCOL.md §9 over the platform's cipher:
///
///     0x01 (version) || nonce (12 random bytes) || AES-GCM ciphertext || tag (16 bytes)
///
/// with the AES key derived from the app's `encryptionKey` and 32-byte salt by PBKDF2-HMAC-SHA256
/// in 10,000 rounds. These numbers are the wire contract the server's SwitchboardCryptography
/// and tools/open_sealed.py share; the tests hold the three to the same bytes.
enum SealedPayload {
    /// The version byte that starts every sealed payload.
    static let version: UInt8 = 0x01
    /// Length of the AES-GCM nonce.
    static let nonceByteCount = 12
    /// Length of the AES-GCM tag.
    static let tagByteCount = 16
    /// Bytes a sealed payload adds to its plaintext: version, nonce and tag.
    static let overhead = 1 + nonceByteCount + tagByteCount
    /// PBKDF2 rounds from `encryptionKey` to the AES key.
    static let keyDerivationIterations = 10_000
    /// Length the `encryptionKdfSalt` must have.
    static let saltByteCount = 32

    /// The AES key length of `mode`; nil for `.none`.
    static func keyByteCount(_ mode: RtmEncryptionMode) -> Int? {
        switch mode {
        case .none: nil
        case .AES128GCM: 16
        case .AES256GCM: 32
        }
    }

    /// The AES key for `mode` from `encryptionKey` and `salt`.
    static func deriveKey<Cipher: PayloadCipher>(
        mode: RtmEncryptionMode, encryptionKey: String, salt: [UInt8], cipher: Cipher.Type = PlatformCipher.self
    ) throws(CipherFailure) -> [UInt8] {
        guard let keyLength = keyByteCount(mode) else { throw CipherFailure("encryption mode is none") }
        guard !encryptionKey.isEmpty else { throw CipherFailure("encryption key is empty") }
        guard salt.count == saltByteCount else {
            throw CipherFailure("salt must be \(saltByteCount) bytes, got \(salt.count)")
        }
        return try cipher.pbkdf2SHA256(
            password: Array(encryptionKey.utf8), salt: salt, iterations: keyDerivationIterations,
            keyByteCount: keyLength)
    }

    /// `plaintext` sealed under `key` with `nonce` (a fresh random one unless a test gives one).
    static func seal<Cipher: PayloadCipher>(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]? = nil, cipher: Cipher.Type = PlatformCipher.self
    ) throws(CipherFailure) -> [UInt8] {
        let nonce = nonce ?? cipher.randomBytes(count: nonceByteCount)
        let body = try cipher.seal(plaintext, key: key, nonce: nonce)
        var sealed = [UInt8]()
        sealed.reserveCapacity(1 + nonce.count + body.count)
        sealed.append(version)
        sealed.append(contentsOf: nonce)
        sealed.append(contentsOf: body)
        return sealed
    }

    /// The plaintext of a payload made by `seal`; throws for a short one, another version,
    /// another key or a changed byte.
    static func open<Cipher: PayloadCipher>(
        _ sealed: [UInt8], key: [UInt8], cipher: Cipher.Type = PlatformCipher.self
    ) throws(CipherFailure) -> [UInt8] {
        guard sealed.count >= overhead else { throw CipherFailure("sealed payload too short") }
        guard sealed[0] == version else { throw CipherFailure("unknown sealed payload version \(sealed[0])") }
        return try cipher.open(
            Array(sealed[(1 + nonceByteCount)...]), key: key, nonce: Array(sealed[1..<(1 + nonceByteCount)]))
    }
}
