import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardCore

/// The platform's cipher (OpenSSL here, CryptoKit and CommonCrypto on Apple platforms) against
/// published test vectors, and the sealed-payload format against bytes made by PyPI's
/// `cryptography`: whichever cipher runs, these bytes must come out.
@Suite(.timeLimit(.minutes(1))) struct CipherVectorTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// McGrew and Viega's GCM test cases 3 (AES-128) and 15 (AES-256): 64 bytes, no AAD.
    static let gcmKey128 = bytes("feffe9928665731c6d6a8f9467308308")
    static let gcmKey256 = bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    static let gcmNonce = bytes("cafebabefacedbaddecaf888")
    static let gcmPlaintext = bytes(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
            + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255")
    static let gcmSealed128 = bytes(
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
            + "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
            + "4d5c2af327cd64a62cf35abd2ba6fab4")
    static let gcmSealed256 = bytes(
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
            + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
            + "b094dac5d93471bdec1a502270e3cc6c")

    @Test func aesGCMMatchesThePublishedVectors() throws {
        #expect(try PlatformCipher.seal(Self.gcmPlaintext, key: Self.gcmKey128, nonce: Self.gcmNonce) == Self.gcmSealed128)
        #expect(try PlatformCipher.seal(Self.gcmPlaintext, key: Self.gcmKey256, nonce: Self.gcmNonce) == Self.gcmSealed256)
        #expect(try PlatformCipher.open(Self.gcmSealed128, key: Self.gcmKey128, nonce: Self.gcmNonce) == Self.gcmPlaintext)
        #expect(try PlatformCipher.open(Self.gcmSealed256, key: Self.gcmKey256, nonce: Self.gcmNonce) == Self.gcmPlaintext)
        // Test case 1: the empty plaintext under the zero key is its tag alone.
        let empty = try PlatformCipher.seal([], key: [UInt8](repeating: 0, count: 16), nonce: [UInt8](repeating: 0, count: 12))
        #expect(empty == Self.bytes("58e2fccefa7e3061367f1d57a4e7455a"))
    }

    @Test func aesGCMRefusesAChangedByteAnotherKeyAndBadLengths() {
        var tampered = Self.gcmSealed128
        tampered[5] ^= 0x01
        var wrongKey = Self.gcmKey128
        wrongKey[0] ^= 0x80
        let refused: [([UInt8], [UInt8], [UInt8])] = [
            (tampered, Self.gcmKey128, Self.gcmNonce),
            (Self.gcmSealed128, wrongKey, Self.gcmNonce),
            (Self.gcmSealed128, Self.gcmKey128, Array(Self.gcmNonce.reversed())),
            (Array(Self.gcmSealed128.prefix(15)), Self.gcmKey128, Self.gcmNonce),
            (Self.gcmSealed128, Array(Self.gcmKey128.prefix(15)), Self.gcmNonce),
            (Self.gcmSealed128, Self.gcmKey128, Array(Self.gcmNonce.prefix(8))),
        ]
        for (sealed, key, nonce) in refused {
            #expect(throws: CipherFailure.self) { try PlatformCipher.open(sealed, key: key, nonce: nonce) }
        }
    }

    @Test func pbkdf2MatchesRFC7914() throws {
        #expect(
            try PlatformCipher.pbkdf2SHA256(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, keyByteCount: 64)
                == Self.bytes(
                    "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                        + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"))
        #expect(
            try PlatformCipher.pbkdf2SHA256(
                password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80_000, keyByteCount: 64)
                == Self.bytes(
                    "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                        + "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"))
    }

    /// The SDK's own key derivation and format, with bytes from Python's hashlib and `cryptography`.
    static let sdkSalt = Array(UInt8(0)..<32)
    static let sdkKey256 = bytes("7575ec7662917c06306a79bf68d7448508d5a0b210ee1faff46d1424abc26c5e")
    static let sdkSealed = bytes("01000102030405060708090a0be209064e94b3558efecedf086825d7e6932cc7f1a4b65254eff3")

    @Test func sealedPayloadsMatchBytesMadeElsewhere() throws {
        let passphrase = "correct horse battery staple"
        #expect(try SealedPayload.deriveKey(mode: .AES256GCM, encryptionKey: passphrase, salt: Self.sdkSalt) == Self.sdkKey256)
        #expect(
            try SealedPayload.deriveKey(mode: .AES128GCM, encryptionKey: passphrase, salt: Self.sdkSalt)
                == Array(Self.sdkKey256.prefix(16)))
        let plaintext = [0x01] + Array("hello ✓".utf8)
        #expect(try SealedPayload.seal(plaintext, key: Self.sdkKey256, nonce: Array(0..<12)) == Self.sdkSealed)
        #expect(try SealedPayload.open(Self.sdkSealed, key: Self.sdkKey256) == plaintext)
        var otherVersion = Self.sdkSealed
        otherVersion[0] = 0x02
        #expect(throws: CipherFailure.self) { try SealedPayload.open(otherVersion, key: Self.sdkKey256) }
        #expect(throws: CipherFailure.self) {
            try SealedPayload.deriveKey(mode: .AES256GCM, encryptionKey: passphrase, salt: Array(Self.sdkSalt.prefix(31)))
        }
        #expect(throws: CipherFailure.self) { try SealedPayload.deriveKey(mode: .none, encryptionKey: passphrase, salt: Self.sdkSalt) }
    }

    @Test func randomNoncesDiffer() {
        #expect(PlatformCipher.randomBytes(count: 12).count == 12)
        #expect(PlatformCipher.randomBytes(count: 16) != PlatformCipher.randomBytes(count: 16))
    }
}
