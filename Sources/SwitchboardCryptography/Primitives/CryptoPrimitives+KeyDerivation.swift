import COpenSSL
import SwitchboardReference

extension CryptoPrimitives {
    /// PBKDF2 iterations used to turn the SDK's `encryptionKey` into an AES key.
    ///
    /// 10,000 because the input is an application secret shared by every client of a channel, not a
    /// user's password: the count only needs to make guessing a weak key costly, while every SDK
    /// instance (including low-end phones) derives the key once per encryption config in a few
    /// milliseconds. It is part of the wire contract: changing it makes old and new peers derive
    /// different keys, so it must never change without a new sealed-payload version.
    public static let keyDerivationIterations = 10_000

    /// Length the SDK's `encryptionKdfSalt` must have, in bytes.
    public static let keyDerivationSaltByteCount = 32

    /// Derives the AES key for `mode` from the SDK's `encryptionKey` and 32-byte `encryptionKdfSalt`
    /// with PBKDF2-HMAC-SHA256 (`keyDerivationIterations` rounds): 16 bytes for AES-128-GCM, 32 for
    /// AES-256-GCM.
    ///
    /// Throws `.invalidEncryptionParameter` for an empty key, a salt that is not 32 bytes, or `.none`.
    public static func deriveKey(
        mode: RtmEncryptionMode, encryptionKey: String, salt: [UInt8]
    ) throws(RtmError) -> [UInt8] {
        guard let keyLength = mode.keyByteCount else {
            throw RtmError(.invalidEncryptionParameter, operation: OperationName.Crypto.deriveKey, reason: "encryption mode is none")
        }
        guard !encryptionKey.isEmpty else {
            throw RtmError(.invalidEncryptionParameter, operation: OperationName.Crypto.deriveKey, reason: "encryption key is empty")
        }
        guard salt.count == keyDerivationSaltByteCount else {
            throw RtmError(
                .invalidEncryptionParameter, operation: OperationName.Crypto.deriveKey,
                reason: "salt must be \(keyDerivationSaltByteCount) bytes, got \(salt.count)")
        }
        return try pbkdf2SHA256(
            password: Array(encryptionKey.utf8), salt: salt,
            iterations: keyDerivationIterations, keyByteCount: keyLength)
    }

    /// PBKDF2-HMAC-SHA256 (`PKCS5_PBKDF2_HMAC`) of `password` and `salt`, `keyByteCount` bytes long.
    public static func pbkdf2SHA256(
        password: [UInt8], salt: [UInt8], iterations: Int, keyByteCount: Int
    ) throws(RtmError) -> [UInt8] {
        guard iterations >= 1, iterations <= Int(Int32.max), keyByteCount >= 1, keyByteCount <= 1024,
            password.count < Int(Int32.max), salt.count < Int(Int32.max)
        else {
            throw RtmError(.invalidEncryptionParameter, operation: OperationName.Crypto.deriveKey, reason: "PBKDF2 parameters out of range")
        }
        var output = [UInt8](repeating: 0, count: keyByteCount)
        let status = withNonNullPointer(password) { passwordPointer, passwordCount in
            withNonNullPointer(salt) { saltPointer, saltCount in
                passwordPointer.withMemoryRebound(to: CChar.self, capacity: max(passwordCount, 1)) { passwordChars in
                    output.withUnsafeMutableBufferPointer {
                        PKCS5_PBKDF2_HMAC(
                            passwordChars, Int32(passwordCount), saltPointer, Int32(saltCount),
                            Int32(iterations), EVP_sha256(), Int32(keyByteCount), $0.baseAddress)
                    }
                }
            }
        }
        guard status == 1 else {
            throw RtmError(.invalidEncryptionParameter, operation: OperationName.Crypto.deriveKey, reason: "PBKDF2 failed")
        }
        return output
    }
}
