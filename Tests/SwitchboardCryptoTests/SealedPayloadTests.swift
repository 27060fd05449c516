import SwitchboardCore
import Testing

@testable import SwitchboardCrypto

@Test(.timeLimit(.minutes(1)), arguments: [RtmEncryptionMode.AES128GCM, .AES256GCM])
func sealedPayloadRoundTrips(mode: RtmEncryptionMode) throws {
    let key = CryptoPrimitives.randomBytes(count: mode.keyByteCount!)
    for plaintext in [[], Array("hello, channel".utf8), CryptoPrimitives.randomBytes(count: 32 * 1024)] {
        let sealed = try CryptoPrimitives.sealedPayload(mode: mode, key: key, plaintext: plaintext)
        #expect(sealed.count == plaintext.count + 29)
        #expect(sealed[0] == 0x01)
        #expect(try CryptoPrimitives.openSealedPayload(mode: mode, key: key, sealed: sealed) == plaintext)
    }
}

@Test(.timeLimit(.minutes(1))) func sealedPayloadUsesFreshNonces() throws {
    let key = CryptoPrimitives.randomBytes(count: 16)
    let first = try CryptoPrimitives.sealedPayload(mode: .AES128GCM, key: key, plaintext: [1, 2, 3])
    let second = try CryptoPrimitives.sealedPayload(mode: .AES128GCM, key: key, plaintext: [1, 2, 3])
    #expect(first[1..<13] != second[1..<13])
}

@Test(.timeLimit(.minutes(1))) func openSealedPayloadRejectsWrongKey() throws {
    let salt = CryptoPrimitives.randomBytes(count: 32)
    let key = try CryptoPrimitives.deriveKey(mode: .AES256GCM, encryptionKey: "right", salt: salt)
    let other = try CryptoPrimitives.deriveKey(mode: .AES256GCM, encryptionKey: "wrong", salt: salt)
    let sealed = try CryptoPrimitives.sealedPayload(mode: .AES256GCM, key: key, plaintext: Array("secret".utf8))
    #expect(throws: RtmError.self) {
        try CryptoPrimitives.openSealedPayload(mode: .AES256GCM, key: other, sealed: sealed)
    }
}

@Test(.timeLimit(.minutes(1))) func openSealedPayloadRejectsAnyTamperedByte() throws {
    let key = CryptoPrimitives.randomBytes(count: 16)
    let sealed = try CryptoPrimitives.sealedPayload(mode: .AES128GCM, key: key, plaintext: Array("tamper me".utf8))
    for index in sealed.indices {
        var tampered = sealed
        tampered[index] &+= 1
        #expect(throws: RtmError.self) {
            try CryptoPrimitives.openSealedPayload(mode: .AES128GCM, key: key, sealed: tampered)
        }
    }
}

@Test(.timeLimit(.minutes(1))) func openSealedPayloadRejectsTruncation() throws {
    let key = CryptoPrimitives.randomBytes(count: 16)
    let sealed = try CryptoPrimitives.sealedPayload(mode: .AES128GCM, key: key, plaintext: [9, 9, 9])
    for length in 0..<sealed.count {
        #expect(throws: RtmError.self) {
            try CryptoPrimitives.openSealedPayload(mode: .AES128GCM, key: key, sealed: Array(sealed.prefix(length)))
        }
    }
}
