import SwitchboardReference

extension CryptoPrimitives {
    /// The version byte that starts every sealed payload.
    public static let sealedPayloadVersion: UInt8 = 0x01

    /// Bytes a sealed payload adds to its plaintext: version, nonce and tag.
    public static let sealedPayloadOverhead = 1 + nonceByteCount + tagByteCount

    /// Encrypts a message payload for the wire under a fresh random nonce.
    ///
    /// The sealed format is
    ///
    ///     0x01 (version, 1 byte) || nonce (12 random bytes) || ciphertext (plaintext length) || tag (16 bytes)
    ///
    /// where ciphertext and tag are AES-GCM (`mode`: AES-128 or AES-256) of the plaintext under
    /// `key` and the nonce, with no associated data. A reader that meets any other version byte
    /// must reject the payload.
    public static func sealedPayload(
        mode: RtmEncryptionMode, key: [UInt8], plaintext: [UInt8]
    ) throws(RtmError) -> [UInt8] {
        let nonce = randomBytes(count: nonceByteCount)
        let body = try seal(mode: mode, plaintext: plaintext, key: key, nonce: nonce)
        var sealed = [UInt8]()
        sealed.reserveCapacity(1 + nonce.count + body.count)
        sealed.append(sealedPayloadVersion)
        sealed.append(contentsOf: nonce)
        sealed.append(contentsOf: body)
        return sealed
    }

    /// Decrypts a payload made by `sealedPayload`.
    ///
    /// Throws if the payload is too short, has an unknown version, was sealed under another key
    /// or mode, or had any byte changed.
    public static func openSealedPayload(
        mode: RtmEncryptionMode, key: [UInt8], sealed: [UInt8]
    ) throws(RtmError) -> [UInt8] {
        guard sealed.count >= sealedPayloadOverhead else {
            throw RtmError(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "sealed payload too short")
        }
        guard sealed[0] == sealedPayloadVersion else {
            throw RtmError(
                .channelEncryptMessageFailed, operation: OperationName.Crypto.open,
                reason: "unknown sealed payload version \(sealed[0])")
        }
        let nonce = Array(sealed[1..<(1 + nonceByteCount)])
        let body = Array(sealed[(1 + nonceByteCount)...])
        return try open(mode: mode, ciphertextAndTag: body, key: key, nonce: nonce)
    }
}
