import Testing
@testable import SwitchboardTransport

/// Replies to messages that arrived before a close or a protocol error go out before the close
/// frame (Autobahn|Testsuite cases 3.2–4.2.5 and 5.15 were NON-STRICT without this).
@Suite(.timeLimit(.minutes(1))) struct CloseOrderingTests {
    @Test func echoOfEarlierMessageComesBeforeProtocolErrorClose() async throws {
        try await withServer { _, port, _ in
            let raw = try RawClient(port: port)
            _ = try #require(raw.handshake())
            raw.write(wireFrame(opcode: 1, payload: Array("first".utf8)) + wireFrame(rsv: 2, opcode: 1, payload: [0x41]))
            let echo = try #require(raw.readFrame())
            #expect(echo.opcode == 1 && echo.payload == Array("first".utf8))
            #expect(raw.readCloseCode() == 1002)
        }
    }

    @Test func echoOfEarlierMessageComesBeforeCloseReply() async throws {
        try await withServer { _, port, _ in
            let raw = try RawClient(port: port)
            _ = try #require(raw.handshake())
            raw.write(wireFrame(opcode: 2, payload: [1, 2, 3]) + wireFrame(opcode: 8, payload: [0x03, 0xE8]))
            let echo = try #require(raw.readFrame())
            #expect(echo.opcode == 2 && echo.payload == [1, 2, 3])
            #expect(raw.readCloseCode() == 1000)
        }
    }
}
