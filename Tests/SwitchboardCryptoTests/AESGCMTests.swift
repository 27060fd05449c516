import SwitchboardCore
import Testing

@testable import SwitchboardCrypto

/// Test cases from McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", as used in NIST's
/// GCM validation: (mode, key, nonce, plaintext, aad, ciphertext, tag).
private let gcmVectors: [(RtmEncryptionMode, String, String, String, String, String, String)] = [
    // Test case 1: AES-128, empty plaintext.
    (.AES128GCM, "00000000000000000000000000000000", "000000000000000000000000", "", "", "",
     "58e2fccefa7e3061367f1d57a4e7455a"),
    // Test case 2: AES-128, one zero block.
    (.AES128GCM, "00000000000000000000000000000000", "000000000000000000000000",
     "00000000000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"),
    // Test case 4: AES-128 with associated data and a partial final block.
    (.AES128GCM, "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"),
    // Test case 13: AES-256, empty plaintext.
    (.AES256GCM, "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
     "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"),
    // Test case 14: AES-256, one zero block.
    (.AES256GCM, "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
     "00000000000000000000000000000000", "", "cea7403d4d606b6e074ec5d3baf39d18",
     "d0d1c8a799996bf0265b98b5d48ab919"),
    // Test case 16: AES-256 with associated data and a partial final block.
    (.AES256GCM, "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"),
]

@Test(.timeLimit(.minutes(1)), arguments: gcmVectors.indices)
func sealMatchesKnownVector(index: Int) throws {
    let (mode, key, nonce, plaintext, aad, ciphertext, tag) = gcmVectors[index]
    let sealed = try CryptoPrimitives.seal(
        mode: mode, plaintext: hex(plaintext), key: hex(key), nonce: hex(nonce), aad: hex(aad))
    #expect(hexString(sealed) == ciphertext + tag)
}

@Test(.timeLimit(.minutes(1)), arguments: gcmVectors.indices)
func openRecoversKnownVector(index: Int) throws {
    let (mode, key, nonce, plaintext, aad, ciphertext, tag) = gcmVectors[index]
    let opened = try CryptoPrimitives.open(
        mode: mode, ciphertextAndTag: hex(ciphertext + tag), key: hex(key), nonce: hex(nonce), aad: hex(aad))
    #expect(opened == hex(plaintext))
}

@Test(.timeLimit(.minutes(1))) func openRejectsEveryFlippedBit() throws {
    let (mode, key, nonce, plaintext, aad, _, _) = gcmVectors[2]
    let sealed = try CryptoPrimitives.seal(
        mode: mode, plaintext: hex(plaintext), key: hex(key), nonce: hex(nonce), aad: hex(aad))
    for index in sealed.indices {
        var tampered = sealed
        tampered[index] ^= 0x01
        #expect(throws: RtmError.self) {
            try CryptoPrimitives.open(mode: mode, ciphertextAndTag: tampered, key: hex(key), nonce: hex(nonce), aad: hex(aad))
        }
    }
}

@Test(.timeLimit(.minutes(1))) func openRejectsWrongAssociatedDataOrNonce() throws {
    let key = CryptoPrimitives.randomBytes(count: 32)
    let nonce = CryptoPrimitives.randomBytes(count: 12)
    let sealed = try CryptoPrimitives.seal(mode: .AES256GCM, plaintext: Array("hello".utf8), key: key, nonce: nonce, aad: [1, 2])
    #expect(throws: RtmError.self) {
        try CryptoPrimitives.open(mode: .AES256GCM, ciphertextAndTag: sealed, key: key, nonce: nonce, aad: [1, 3])
    }
    #expect(throws: RtmError.self) {
        try CryptoPrimitives.open(
            mode: .AES256GCM, ciphertextAndTag: sealed, key: key, nonce: CryptoPrimitives.randomBytes(count: 12), aad: [1, 2])
    }
}

@Test(.timeLimit(.minutes(1))) func keyLengthMustMatchMode() {
    let nonce = [UInt8](repeating: 0, count: 12)
    for (mode, key) in [(RtmEncryptionMode.AES128GCM, [UInt8](repeating: 0, count: 32)),
                        (.AES256GCM, [UInt8](repeating: 0, count: 16)), (.none, [UInt8](repeating: 0, count: 16))] {
        #expect {
            try CryptoPrimitives.seal(mode: mode, plaintext: [1], key: key, nonce: nonce)
        } throws: { ($0 as? RtmError)?.code == .invalidEncryptionParameter }
    }
}

@Test(.timeLimit(.minutes(1))) func nonceMustBeTwelveBytes() {
    #expect {
        try CryptoPrimitives.seal(mode: .AES128GCM, plaintext: [1], key: [UInt8](repeating: 0, count: 16), nonce: [0, 0])
    } throws: { ($0 as? RtmError)?.code == .invalidEncryptionParameter }
}

@Test(.timeLimit(.minutes(1))) func openRejectsInputShorterThanTag() {
    #expect(throws: RtmError.self) {
        try CryptoPrimitives.open(
            mode: .AES128GCM, ciphertextAndTag: [1, 2, 3], key: [UInt8](repeating: 0, count: 16),
            nonce: [UInt8](repeating: 0, count: 12))
    }
}
