import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(5))) struct SHA1Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
    }

    @Test func knownVectors() {
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(
            hex(SHA1.digest(Array("The quick brown fox jumps over the lazy dog".utf8)))
                == "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12")
        #expect(
            hex(SHA1.digest([UInt8](repeating: 0x61, count: 1_000_000)))
                == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func acceptKeyFromRFC6455() {
        #expect(WebSocketAccept.value(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func keyValidation() {
        #expect(WebSocketAccept.isValidKey("dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(!WebSocketAccept.isValidKey("c2hvcnQ="))
        #expect(!WebSocketAccept.isValidKey("not base64!!"))
        #expect(WebSocketAccept.isValidKey(WebSocketAccept.randomKey()))
    }
}
