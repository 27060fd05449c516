import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(2))) struct WebSocketAcceptTests {
    @Test func acceptKeyFromRFC6455() {
        #expect(WebSocketAccept.value(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// Values computed with Python's `hashlib.sha1` and `base64`.
    @Test func acceptKeyOfOtherKeys() {
        #expect(WebSocketAccept.value(forKey: "dGhlIHNhbXBsZSBub25jZR==") == "Zgw8jYXtqX5qJr7MJ1Q/MqzeSRI=")
        #expect(WebSocketAccept.value(forKey: "") == "Kfh9QIsMVZcl6xEPYxPHzW8SZ8w=")
    }

    @Test func keyValidation() {
        #expect(WebSocketAccept.isValidKey("dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(!WebSocketAccept.isValidKey("c2hvcnQ="))
        #expect(!WebSocketAccept.isValidKey("not base64!!"))
        #expect(WebSocketAccept.isValidKey(WebSocketAccept.randomKey()))
    }
}
