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

@Test(.timeLimit(.minutes(1))) func sha1MatchesFIPS180Examples() {
    #expect(hexString(CryptoPrimitives.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    #expect(hexString(CryptoPrimitives.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(
        hexString(CryptoPrimitives.sha1(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    #expect(
        hexString(CryptoPrimitives.sha1([UInt8](repeating: 0x61, count: 1_000_000)))
            == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
}

@Test(.timeLimit(.minutes(1))) func sha1OfTheQuickBrownFox() {
    #expect(
        hexString(CryptoPrimitives.sha1(Array("The quick brown fox jumps over the lazy dog".utf8)))
            == "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12")
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
