import Testing

@testable import SwitchboardCrypto

@Test(.timeLimit(.minutes(1))) func hmacSHA256MatchesRFC4231Case1() {
    let mac = CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
    #expect(hexString(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
}

@Test(.timeLimit(.minutes(1))) func hmacSHA256MatchesRFC4231Case2() {
    let mac = CryptoPrimitives.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
    #expect(hexString(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
}

@Test(.timeLimit(.minutes(1))) func hmacSHA256AcceptsEmptyKeyAndMessage() {
    // HMAC-SHA256("", "") as computed by Python's hmac module.
    #expect(
        hexString(CryptoPrimitives.hmacSHA256(key: [], message: []))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
}

@Test(.timeLimit(.minutes(1))) func sha256MatchesFIPS180Examples() {
    #expect(hexString(CryptoPrimitives.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
        hexString(CryptoPrimitives.sha256(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
}

@Test(.timeLimit(.minutes(1))) func constantTimeEqualsComparesContentAndLength() {
    #expect(CryptoPrimitives.constantTimeEquals([], []))
    #expect(CryptoPrimitives.constantTimeEquals([1, 2, 3], [1, 2, 3]))
    #expect(!CryptoPrimitives.constantTimeEquals([1, 2, 3], [1, 2, 4]))
    #expect(!CryptoPrimitives.constantTimeEquals([1, 2, 3], [1, 2]))
}

@Test(.timeLimit(.minutes(1))) func randomBytesHaveRequestedLengthAndDiffer() {
    #expect(CryptoPrimitives.randomBytes(count: 0).isEmpty)
    let first = CryptoPrimitives.randomBytes(count: 32)
    let second = CryptoPrimitives.randomBytes(count: 32)
    #expect(first.count == 32)
    #expect(first != second)
}
