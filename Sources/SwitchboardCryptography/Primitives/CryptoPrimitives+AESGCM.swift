import COpenSSL
import SwitchboardReference

extension CryptoPrimitives {
    /// Encrypts `plaintext` with AES-GCM under `key` and returns `ciphertext || 16-byte tag`.
    ///
    /// `mode` picks AES-128 or AES-256 and `key` must have its length; `nonce` must be 12 bytes
    /// and must never repeat under one key. `aad` is authenticated but not encrypted.
    public static func seal(
        mode: RtmEncryptionMode, plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8] = []
    ) throws(RtmError) -> [UInt8] {
        let cipher = try gcmCipher(mode: mode, key: key, nonce: nonce, operation: OperationName.Crypto.seal)
        guard plaintext.count < Int(Int32.max) - tagByteCount, aad.count < Int(Int32.max) else {
            throw RtmError(.invalidParameter, operation: OperationName.Crypto.seal, reason: "input too large")
        }
        guard let context = EVP_CIPHER_CTX_new() else {
            throw RtmError(.channelEncryptMessageFailed, operation: OperationName.Crypto.seal, reason: "out of memory")
        }
        defer { EVP_CIPHER_CTX_free(context) }

        var output = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        let ok: Bool = output.withUnsafeMutableBufferPointer { out in
            guard EVP_EncryptInit_ex(context, cipher, nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceByteCount), nil) == 1,
                EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
            else { return false }
            var written: Int32 = 0
            if !aad.isEmpty {
                guard EVP_EncryptUpdate(context, nil, &written, aad, Int32(aad.count)) == 1 else { return false }
            }
            var produced = 0
            if !plaintext.isEmpty {
                guard EVP_EncryptUpdate(context, out.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1
                else { return false }
                produced = Int(written)
            }
            guard EVP_EncryptFinal_ex(context, out.baseAddress! + produced, &written) == 1 else { return false }
            produced += Int(written)
            guard produced == plaintext.count else { return false }
            return EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), out.baseAddress! + produced) == 1
        }
        guard ok else {
            throw RtmError(.channelEncryptMessageFailed, operation: OperationName.Crypto.seal, reason: "AES-GCM encryption failed")
        }
        return output
    }

    /// Decrypts `ciphertext || 16-byte tag` produced by `seal` and returns the plaintext.
    ///
    /// Throws if the key, nonce or associated data differ from sealing, or if any byte was
    /// changed: the tag is checked before anything is returned, so it never returns garbage.
    public static func open(
        mode: RtmEncryptionMode, ciphertextAndTag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8] = []
    ) throws(RtmError) -> [UInt8] {
        let cipher = try gcmCipher(mode: mode, key: key, nonce: nonce, operation: OperationName.Crypto.open)
        guard ciphertextAndTag.count >= tagByteCount else {
            throw RtmError(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "ciphertext shorter than the tag")
        }
        guard ciphertextAndTag.count < Int(Int32.max), aad.count < Int(Int32.max) else {
            throw RtmError(.invalidParameter, operation: OperationName.Crypto.open, reason: "input too large")
        }
        guard let context = EVP_CIPHER_CTX_new() else {
            throw RtmError(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "out of memory")
        }
        defer { EVP_CIPHER_CTX_free(context) }

        let bodyCount = ciphertextAndTag.count - tagByteCount
        var tag = Array(ciphertextAndTag[bodyCount...])
        var plaintext = [UInt8](repeating: 0, count: bodyCount)
        let ok: Bool = plaintext.withUnsafeMutableBufferPointer { out in
            ciphertextAndTag.withUnsafeBufferPointer { input in
                guard EVP_DecryptInit_ex(context, cipher, nil, nil, nil) == 1,
                    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceByteCount), nil) == 1,
                    EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
                else { return false }
                var written: Int32 = 0
                if !aad.isEmpty {
                    guard EVP_DecryptUpdate(context, nil, &written, aad, Int32(aad.count)) == 1 else { return false }
                }
                var produced = 0
                if bodyCount > 0 {
                    guard EVP_DecryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(bodyCount)) == 1
                    else { return false }
                    produced = Int(written)
                }
                guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tag) == 1
                else { return false }
                var scratch = [UInt8](repeating: 0, count: 16)
                guard EVP_DecryptFinal_ex(context, &scratch, &written) == 1 else { return false }
                return produced + Int(written) == bodyCount
            }
        }
        guard ok else {
            for index in plaintext.indices { plaintext[index] = 0 }
            throw RtmError(
                .channelEncryptMessageFailed, operation: OperationName.Crypto.open,
                reason: "authentication failed: wrong key or tampered data")
        }
        return plaintext
    }

    /// The OpenSSL cipher for `mode`, after checking the key and nonce lengths.
    private static func gcmCipher(
        mode: RtmEncryptionMode, key: [UInt8], nonce: [UInt8], operation: OperationName.Crypto
    ) throws(RtmError) -> OpaquePointer {
        guard let keyLength = mode.keyByteCount else {
            throw RtmError(.invalidEncryptionParameter, operation: operation, reason: "encryption mode is none")
        }
        guard key.count == keyLength else {
            throw RtmError(
                .invalidEncryptionParameter, operation: operation,
                reason: "\(mode) needs a \(keyLength)-byte key, got \(key.count) bytes")
        }
        guard nonce.count == nonceByteCount else {
            throw RtmError(
                .invalidEncryptionParameter, operation: operation,
                reason: "AES-GCM needs a \(nonceByteCount)-byte nonce, got \(nonce.count) bytes")
        }
        let cipher = mode == .AES128GCM ? EVP_aes_128_gcm() : EVP_aes_256_gcm()
        guard let cipher else {
            throw RtmError(.channelEncryptMessageFailed, operation: operation, reason: "cipher unavailable")
        }
        return cipher
    }
}
