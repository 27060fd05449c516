import SwitchboardCore
import Testing

@testable import SwitchboardCrypto

@Test(.timeLimit(.minutes(1))) func actorSealsAndOpensLikeThePrimitives() async throws {
    let crypto = Crypto()
    let key = try await crypto.deriveKey(mode: .AES128GCM, encryptionKey: "app key", salt: await crypto.randomBytes(count: 32))
    let sealed = try await crypto.sealedPayload(mode: .AES128GCM, key: key, plaintext: Array("hi".utf8))
    #expect(try CryptoPrimitives.openSealedPayload(mode: .AES128GCM, key: key, sealed: sealed) == Array("hi".utf8))
    #expect(try await crypto.openSealedPayload(mode: .AES128GCM, key: key, sealed: sealed) == Array("hi".utf8))
    let nonce = await crypto.randomBytes(count: 12)
    let raw = try await crypto.seal(mode: .AES128GCM, plaintext: [1, 2], key: key, nonce: nonce, aad: [3])
    #expect(try await crypto.open(mode: .AES128GCM, ciphertextAndTag: raw, key: key, nonce: nonce, aad: [3]) == [1, 2])
    #expect(await crypto.sha256([]) == CryptoPrimitives.sha256([]))
    #expect(await crypto.hmacSHA256(key: [1], message: [2]) == CryptoPrimitives.hmacSHA256(key: [1], message: [2]))
    #expect(await crypto.constantTimeEquals([1], [1]))
}
