#if canImport(CryptoKit) && canImport(CommonCrypto)
import CommonCrypto
import CryptoKit
import Foundation

/// The platform's cipher on Apple platforms.
typealias PlatformCipher = AppleCipher

/// `PayloadCipher` through CryptoKit (AES-GCM) and CommonCrypto (PBKDF2).
enum AppleCipher: PayloadCipher {
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws(CipherFailure) -> [UInt8] {
        try check(key: key, nonce: nonce)
        do {
            let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce))
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw CipherFailure("AES-GCM encryption failed: \(error)")
        }
    }

    static func open(_ ciphertextAndTag: [UInt8], key: [UInt8], nonce: [UInt8]) throws(CipherFailure) -> [UInt8] {
        try check(key: key, nonce: nonce)
        guard ciphertextAndTag.count >= SealedPayload.tagByteCount else {
            throw CipherFailure("ciphertext shorter than the tag")
        }
        let split = ciphertextAndTag.count - SealedPayload.tagByteCount
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertextAndTag[..<split],
                tag: ciphertextAndTag[split...])
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key)))
        } catch {
            throw CipherFailure("authentication failed: wrong key or tampered data")
        }
    }

    static func pbkdf2SHA256(
        password: [UInt8], salt: [UInt8], iterations: Int, keyByteCount: Int
    ) throws(CipherFailure) -> [UInt8] {
        guard iterations >= 1, iterations <= Int(UInt32.max), keyByteCount >= 1, keyByteCount <= 1024 else {
            throw CipherFailure("PBKDF2 parameters out of range")
        }
        var output = [UInt8](repeating: 0, count: keyByteCount)
        let status = password.withUnsafeBytes { passwordBytes in
            CCKeyDerivationPBKDF(
                CCPBKDFAlgorithm(kCCPBKDF2), passwordBytes.bindMemory(to: CChar.self).baseAddress, password.count,
                salt, salt.count, CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), UInt32(iterations), &output,
                keyByteCount)
        }
        guard status == Int32(kCCSuccess) else { throw CipherFailure("PBKDF2 failed (\(status))") }
        return output
    }

    static func randomBytes(count: Int) -> [UInt8] {
        // SystemRandomNumberGenerator is the system's cryptographically secure generator.
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    private static func check(key: [UInt8], nonce: [UInt8]) throws(CipherFailure) {
        guard key.count == 16 || key.count == 32 else { throw CipherFailure("AES-GCM needs a 16- or 32-byte key") }
        guard nonce.count == SealedPayload.nonceByteCount else {
            throw CipherFailure("AES-GCM needs a \(SealedPayload.nonceByteCount)-byte nonce")
        }
    }
}
#endif
