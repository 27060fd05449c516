import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(5))) struct HandshakeTests {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    func request(
        method: String = "GET", version: String = "HTTP/1.1", drop: Set<String> = [],
        replace: [String: String] = [:]
    ) -> [UInt8] {
        var headers: [(String, String)] = [
            ("Host", "example.com"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
            ("Sec-WebSocket-Key", Self.key), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Protocol", "chat, switchboard.v1"), ("Origin", "https://app.example"),
        ]
        headers = headers.filter { !drop.contains($0.0) }.map { ($0.0, replace[$0.0] ?? $0.1) }
        var text = "\(method) /ws?x=1 \(version)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    let handshake = ServerHandshake(subprotocol: "switchboard.v1")

    @Test func acceptsValidRequest() throws {
        let accepted = try handshake.respond(to: request()).get()
        #expect(accepted.subprotocol == "switchboard.v1")
        #expect(accepted.path == "/ws?x=1")
        #expect(accepted.headers["origin"] == "https://app.example")
        #expect(accepted.headers["host"] != nil)
        let response = String(decoding: accepted.response, as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(response.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(response.contains("Sec-WebSocket-Protocol: switchboard.v1\r\n"))
        #expect(response.hasSuffix("\r\n\r\n"))
    }

    @Test func theUpgradesOwnHeadersAreNotKept() throws {
        let accepted = try handshake.respond(to: request()).get()
        #expect(Set(accepted.headers.keys).isDisjoint(with: HTTPHead.handshakeHeaders))
        #expect(!accepted.headers.isEmpty)
    }

    @Test func upgradeHeaderIsCaseInsensitive() throws {
        let accepted = try handshake.respond(
            to: request(replace: ["Upgrade": "WebSocket", "Connection": "UPGRADE"])
        ).get()
        #expect(accepted.subprotocol == "switchboard.v1")
    }

    @Test(arguments: [
        "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Protocol",
    ])
    func missingHeaderIs400(_ header: String) {
        guard case .failure(let rejected) = handshake.respond(to: request(drop: [header])) else {
            Issue.record("accepted without \(header)")
            return
        }
        #expect(rejected.status == 400)
    }

    @Test func wrongVersionIs426WithSupportedVersion() {
        for version in [nil, "8"] as [String?] {
            let bytes =
                version.map { request(replace: ["Sec-WebSocket-Version": $0]) }
                ?? request(drop: ["Sec-WebSocket-Version"])
            guard case .failure(let rejected) = handshake.respond(to: bytes) else {
                Issue.record("accepted version \(String(describing: version))")
                continue
            }
            #expect(rejected.status == 426)
            #expect(String(decoding: rejected.response, as: UTF8.self).contains("Sec-WebSocket-Version: 13\r\n"))
        }
    }

    @Test func wrongSubprotocolIs400() {
        let result = handshake.respond(to: request(replace: ["Sec-WebSocket-Protocol": "chat"]))
        guard case .failure(let rejected) = result else {
            Issue.record("accepted without subprotocol")
            return
        }
        #expect(rejected.status == 400)
    }

    @Test func optionalSubprotocol() throws {
        let lenient = ServerHandshake(subprotocol: "switchboard.v1", requireSubprotocol: false)
        let accepted = try lenient.respond(to: request(drop: ["Sec-WebSocket-Protocol"])).get()
        #expect(accepted.subprotocol == nil)
        #expect(!String(decoding: accepted.response, as: UTF8.self).contains("Sec-WebSocket-Protocol"))
    }

    @Test func badKeyMethodAndVersion() {
        #expect(throws: ServerHandshake.Rejected.self) {
            try handshake.respond(to: request(replace: ["Sec-WebSocket-Key": "c2hvcnQ="])).get()
        }
        #expect(throws: ServerHandshake.Rejected.self) { try handshake.respond(to: request(method: "POST")).get() }
        #expect(throws: ServerHandshake.Rejected.self) {
            try handshake.respond(to: request(version: "HTTP/1.0")).get()
        }
        #expect(throws: ServerHandshake.Rejected.self) { try handshake.respond(to: Array("garbage\r\n\r\n".utf8)).get() }
    }

    @Test func headReaderFindsEndAcrossChunksAndKeepsRest() throws {
        var reader = HTTPHeadReader(maxBytes: 8192)
        let bytes = request() + [0x81, 0x80]
        var result: (head: [UInt8], rest: [UInt8])?
        for chunk in stride(from: 0, to: bytes.count, by: 7) {
            result = try reader.append(Array(bytes[chunk..<min(chunk + 7, bytes.count)]))
            if result != nil { break }
        }
        #expect(result?.head == request())
        #expect(result?.rest == [0x81, 0x80])
    }

    @Test func headReaderRefusesOversize() {
        var reader = HTTPHeadReader(maxBytes: 8192)
        let big = Array("GET / HTTP/1.1\r\nX-Pad: \(String(repeating: "a", count: 9000))\r\n".utf8)
        #expect(throws: HTTPHeadReader.Failure.tooLarge) { try reader.append(big) }
    }

    @Test func clientValidatesServerAnswer() throws {
        let client = ClientHandshake(host: "h", path: "/", subprotocols: ["switchboard.v1"], key: Self.key)
        let accepted = try handshake.respond(to: client.request).get()
        #expect(try client.validate(response: accepted.response) == "switchboard.v1")

        let other = ClientHandshake(host: "h", path: "/", subprotocols: ["switchboard.v1"])
        #expect(throws: WebSocketClientError.self) { try other.validate(response: accepted.response) }

        let unoffered = ClientHandshake(host: "h", path: "/", subprotocols: [], key: Self.key)
        #expect(throws: WebSocketClientError.self) { try unoffered.validate(response: accepted.response) }

        let refused = ServerHandshake.Rejected(400, "no").response
        #expect(throws: WebSocketClientError.self) { try client.validate(response: refused) }
    }
}
