#if os(Linux)
import SwitchboardCryptography
import SwitchboardCore

/// The platform's cipher on Linux.
typealias PlatformCipher = OpenSSLCipher

/// `PayloadCipher` through OpenSSL, by way of SwitchboardCryptography's primitives (the ones the
/// server's Crypto module runs too).
enum OpenSSLCipher: PayloadCipher {
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws(CipherFailure) -> [UInt8] {
        do {
            return try CryptoPrimitives.seal(mode: mode(forKey: key), plaintext: plaintext, key: key, nonce: nonce)
        } catch {
            throw CipherFailure(error.reason)
        }
    }

    static func open(_ ciphertextAndTag: [UInt8], key: [UInt8], nonce: [UInt8]) throws(CipherFailure) -> [UInt8] {
        do {
            return try CryptoPrimitives.open(
                mode: mode(forKey: key), ciphertextAndTag: ciphertextAndTag, key: key, nonce: nonce)
        } catch {
            throw CipherFailure(error.reason)
        }
    }

    static func pbkdf2SHA256(
        password: [UInt8], salt: [UInt8], iterations: Int, keyByteCount: Int
    ) throws(CipherFailure) -> [UInt8] {
        do {
            return try CryptoPrimitives.pbkdf2SHA256(
                password: password, salt: salt, iterations: iterations, keyByteCount: keyByteCount)
        } catch {
            throw CipherFailure(error.reason)
        }
    }

    static func randomBytes(count: Int) -> [UInt8] { CryptoPrimitives.randomBytes(count: count) }

    /// The primitives name the AES variant by mode; the key's length says which.
    private static func mode(forKey key: [UInt8]) -> RtmEncryptionMode {
        key.count == 16 ? .AES128GCM : .AES256GCM
    }
}
#endif
