import SwitchboardCore

/// The crypto module: AES-GCM, key derivation, HMAC, hashing, secure random and login-token checks.
///
/// Each method runs the matching `CryptoPrimitives` function; code on a hot path (per-message
/// sealing in the SDK) should call `CryptoPrimitives` directly and skip the actor hop.
public actor Crypto {
    /// The certificates in force, which a reload replaces (`ReplaceAppCertificates`).
    let certificates: Certificates

    /// Creates the module with the apps it can verify tokens for (`appId` → app certificate).
    public init(credentials: [String: String] = [:]) {
        certificates = Certificates(TokenVerifier(credentials: credentials))
    }

    /// The verifier of the certificates in force now.
    var verifier: TokenVerifier { certificates.verifier }

    /// AES-GCM encryption: returns `ciphertext || tag`. See `CryptoPrimitives.seal`.
    public func seal(
        mode: RtmEncryptionMode, plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8] = []
    ) throws(RtmError) -> [UInt8] {
        try CryptoPrimitives.seal(mode: mode, plaintext: plaintext, key: key, nonce: nonce, aad: aad)
    }

    /// AES-GCM decryption of `ciphertext || tag`. See `CryptoPrimitives.open`.
    public func open(
        mode: RtmEncryptionMode, ciphertextAndTag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8] = []
    ) throws(RtmError) -> [UInt8] {
        try CryptoPrimitives.open(mode: mode, ciphertextAndTag: ciphertextAndTag, key: key, nonce: nonce, aad: aad)
    }

    /// Seals a payload in the versioned wire format. See `CryptoPrimitives.sealedPayload`.
    public func sealedPayload(mode: RtmEncryptionMode, key: [UInt8], plaintext: [UInt8]) throws(RtmError) -> [UInt8] {
        try CryptoPrimitives.sealedPayload(mode: mode, key: key, plaintext: plaintext)
    }

    /// Opens a payload in the versioned wire format. See `CryptoPrimitives.openSealedPayload`.
    public func openSealedPayload(mode: RtmEncryptionMode, key: [UInt8], sealed: [UInt8]) throws(RtmError) -> [UInt8] {
        try CryptoPrimitives.openSealedPayload(mode: mode, key: key, sealed: sealed)
    }

    /// Derives the AES key from `encryptionKey` and a 32-byte salt. See `CryptoPrimitives.deriveKey`.
    public func deriveKey(mode: RtmEncryptionMode, encryptionKey: String, salt: [UInt8]) throws(RtmError) -> [UInt8] {
        try CryptoPrimitives.deriveKey(mode: mode, encryptionKey: encryptionKey, salt: salt)
    }

    /// HMAC-SHA256 of `message` under `key`.
    public func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        CryptoPrimitives.hmacSHA256(key: key, message: message)
    }

    /// SHA-256 of `data`.
    public func sha256(_ data: [UInt8]) -> [UInt8] {
        CryptoPrimitives.sha256(data)
    }

    /// `count` cryptographically secure random bytes.
    public func randomBytes(count: Int) -> [UInt8] {
        CryptoPrimitives.randomBytes(count: count)
    }

    /// Whether two byte strings are equal, compared in constant time.
    public func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        CryptoPrimitives.constantTimeEquals(lhs, rhs)
    }

    /// Checks a login token (formats 006 and 007). See `TokenVerifier.verifyLogin`.
    public func verifyLogin(token: String, appId: String, userId: String, now: UInt64) throws(RtmError) -> TokenGrant {
        try verifier.verifyLogin(token: token, appId: appId, userId: userId, now: now)
    }
}
