import SwitchboardCore
import Testing

@testable import SwitchboardCrypto

@Test(.timeLimit(.minutes(1))) func pbkdf2MatchesKnownVectors() throws {
    // PBKDF2-HMAC-SHA256, password "password", salt "salt" (RFC 7914 §11 style vectors).
    let one = try CryptoPrimitives.pbkdf2SHA256(
        password: Array("password".utf8), salt: Array("salt".utf8), iterations: 1, keyByteCount: 32)
    #expect(hexString(one) == "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
    let two = try CryptoPrimitives.pbkdf2SHA256(
        password: Array("password".utf8), salt: Array("salt".utf8), iterations: 2, keyByteCount: 32)
    #expect(hexString(two) == "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43")
}

@Test(.timeLimit(.minutes(1))) func deriveKeyHasModeLengthAndIsDeterministic() throws {
    let salt = [UInt8](repeating: 7, count: 32)
    let short = try CryptoPrimitives.deriveKey(mode: .AES128GCM, encryptionKey: "secret", salt: salt)
    let long = try CryptoPrimitives.deriveKey(mode: .AES256GCM, encryptionKey: "secret", salt: salt)
    #expect(short.count == 16)
    #expect(long.count == 32)
    #expect(Array(long.prefix(16)) == short)
    #expect(try CryptoPrimitives.deriveKey(mode: .AES256GCM, encryptionKey: "secret", salt: salt) == long)
    #expect(try CryptoPrimitives.deriveKey(mode: .AES256GCM, encryptionKey: "secreT", salt: salt) != long)
}

@Test(.timeLimit(.minutes(1))) func deriveKeyUsesTheDocumentedIterationCount() throws {
    let salt = [UInt8](repeating: 1, count: 32)
    let expected = try CryptoPrimitives.pbkdf2SHA256(
        password: Array("k".utf8), salt: salt, iterations: 10_000, keyByteCount: 16)
    #expect(try CryptoPrimitives.deriveKey(mode: .AES128GCM, encryptionKey: "k", salt: salt) == expected)
}

@Test(.timeLimit(.minutes(1))) func deriveKeyRejectsInvalidParameters() {
    let salt = [UInt8](repeating: 0, count: 32)
    let cases: [(RtmEncryptionMode, String, [UInt8])] = [
        (.AES128GCM, "", salt), (.AES256GCM, "key", [UInt8](repeating: 0, count: 31)),
        (.AES256GCM, "key", []), (.none, "key", salt),
    ]
    for (mode, key, salt) in cases {
        #expect {
            try CryptoPrimitives.deriveKey(mode: mode, encryptionKey: key, salt: salt)
        } throws: { error in
            guard let error = error as? RtmError else { return false }
            return error.code == .invalidEncryptionParameter && error.code.rawValue == -10020
        }
    }
}
