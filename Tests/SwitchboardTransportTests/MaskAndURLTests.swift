import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(5))) struct MaskAndURLTests {
    @Test func maskMatchesBytewiseDefinitionAtEveryOffset() {
        let key: (UInt8, UInt8, UInt8, UInt8) = (0xA1, 0x02, 0x7F, 0xFE)
        let k = [key.0, key.1, key.2, key.3]
        for offset in 0..<5 {
            for count in [0, 1, 7, 8, 9, 31, 100] {
                let input = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13) }
                var fast = input
                fast.withUnsafeMutableBytes { applyMask(key, to: $0, offset: offset) }
                let slow = input.enumerated().map { $0.element ^ k[($0.offset + offset) & 3] }
                #expect(fast == slow, "offset \(offset) count \(count)")
            }
        }
    }

    @Test func parsesWebSocketURLs() throws {
        let plain = try #require(WebSocketURL("ws://127.0.0.1:8080/rtm?token=a"))
        #expect(plain.host == "127.0.0.1" && plain.port == 8080 && plain.path == "/rtm?token=a")
        #expect(plain.hostHeader == "127.0.0.1:8080")
        let defaults = try #require(WebSocketURL("ws://example.com"))
        #expect(defaults.port == 80 && defaults.path == "/" && defaults.hostHeader == "example.com")
        let v6 = try #require(WebSocketURL("ws://[::1]:9000/x"))
        #expect(v6.host == "::1" && v6.port == 9000 && v6.hostHeader == "[::1]:9000")
        #expect(WebSocketURL("ws://h?q=1")?.path == "/?q=1")
        let secure = try #require(WebSocketURL("wss://example.com/rtm"))
        #expect(secure.secure && !plain.secure && secure.port == 443 && secure.hostHeader == "example.com")
        #expect(WebSocketURL("WSS://h:8443")?.hostHeader == "h:8443")
        for bad in ["http://h/", "wss:/h/", "wss://", "ws://", "ws://h:0/", "ws://h:99999/", "ws://h:x/", "ws://u@h/"] {
            #expect(WebSocketURL(bad) == nil, "\(bad)")
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct MaskKeysTests {
    @Test func keysAreFreshRandomBytesAcrossRefills() {
        var pool = MaskKeys(size: 64)
        var keys: [UInt32] = []
        for _ in 0..<(16 * 8) {
            let (a, b, c, d) = pool.take()
            keys.append(UInt32(a) | UInt32(b) << 8 | UInt32(c) << 16 | UInt32(d) << 24)
        }
        // 128 keys over 8 refills of the pool: random 32-bit values all differ (a repeat has a
        // chance of about 4 in a million), and none is all zeros (an unfilled pool).
        #expect(Set(keys).count == keys.count)
        #expect(!keys.contains(0))
    }
}
