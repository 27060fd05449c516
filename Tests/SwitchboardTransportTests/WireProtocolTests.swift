import SwitchboardTestKit
import Foundation
import Synchronization
import Testing
@testable import SwitchboardTransport

/// The server against a raw socket: framing, control frames and protocol errors.
@Suite(.timeLimit(.minutes(1))) struct WireProtocolTests {
    @Test func fragmentationAndPingOverRawSocket() async throws {
        try await withServer { _, port, _ in
            let raw = try RawClient(port: port)
            let head = try #require(raw.handshake())
            #expect(head.hasPrefix("HTTP/1.1 101"))
            #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
            let text = Array("fragmented €".utf8)
            raw.write(
                wireFrame(fin: false, opcode: 1, payload: Array(text[0..<5]))
                    + wireFrame(opcode: 9, payload: Array("are you there".utf8))
                    + wireFrame(fin: false, opcode: 0, payload: Array(text[5..<12]))
                    + wireFrame(opcode: 0, payload: Array(text[12...])))
            let pong = try #require(raw.readFrame())
            #expect(pong.opcode == 10)
            #expect(pong.payload == Array("are you there".utf8))
            let echo = try #require(raw.readFrame())
            #expect(echo.opcode == 1 && echo.fin)
            #expect(echo.payload == text)
            raw.write(wireFrame(opcode: 8, payload: [0x0F, 0xA0] + Array("bye".utf8)))
            let close = try #require(raw.readFrame())
            #expect(close.opcode == 8)
            #expect(close.payload == [0x0F, 0xA0])
            #expect(raw.readsEOF())
        }
    }

    @Test func unmaskedFrameClosesOnlyThatConnection() async throws {
        let handler = RecordingHandler(echo: true)
        try await withServer(handler: handler) { _, port, group in
            let good = RecordingHandler()
            let other = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", group: group, handler: good)
            let raw = try RawClient(port: port)
            _ = raw.handshake()
            raw.write(wireFrame(opcode: 2, payload: [1, 2, 3], mask: nil))
            #expect(raw.readCloseCode() == 1002)
            #expect(await handler.wait { $0.closed.contains { $0.code == .protocolError } })
            other.sendText("still here")
            #expect(await good.wait { $0.messages.count == 1 })
            #expect(good.messages(for: other.id) == [.text("still here")])
            #expect(other.isOpen)
        }
    }

    @Test(arguments: [
        ("rsv", wireFrame(rsv: 4, opcode: 2, payload: [1]), UInt16(1002)),
        ("bad utf8", wireFrame(opcode: 1, payload: [0xC0, 0xAF]), 1007),
        ("close 1005", wireFrame(opcode: 8, payload: [0x03, 0xED]), 1002),
        ("too big", wireFrame(opcode: 2, payload: [], lengthOverride: 1 << 30), 1009),
    ])
    func malformedInputGetsItsCloseCode(_ name: String, _ bytes: [UInt8], _ code: UInt16) async throws {
        try await withServer { _, port, _ in
            let raw = try RawClient(port: port)
            _ = raw.handshake()
            raw.write(bytes)
            #expect(raw.readCloseCode() == code, "\(name)")
        }
    }

    @Test func handshakeRefusals() async throws {
        try await withServer(.init(subprotocol: "switchboard.v1")) { _, port, _ in
            let noProtocol = try RawClient(port: port)
            #expect(noProtocol.handshake()?.hasPrefix("HTTP/1.1 400") == true)
            #expect(noProtocol.readsEOF())

            let wrongVersion = try RawClient(port: port)
            let head = wrongVersion.handshake(subprotocol: "switchboard.v1", version: "8")
            #expect(head?.hasPrefix("HTTP/1.1 426") == true)
            #expect(head?.contains("Sec-WebSocket-Version: 13") == true)

            let huge = try RawClient(port: port)
            let pad = "X-Pad: \(String(repeating: "a", count: 9000))\r\n"
            #expect(huge.handshake(subprotocol: "switchboard.v1", extra: pad)?.hasPrefix("HTTP/1.1 431") == true)

            let ok = try RawClient(port: port)
            let accepted = ok.handshake(subprotocol: "chat, switchboard.v1")
            #expect(accepted?.hasPrefix("HTTP/1.1 101") == true)
            #expect(accepted?.contains("Sec-WebSocket-Protocol: switchboard.v1\r\n") == true)
        }
    }

    @Test func closeWithoutStatusAndBufferAccounting() async throws {
        let handler = RecordingHandler(echo: true)
        try await withServer(handler: handler) { _, port, _ in
            let raw = try RawClient(port: port)
            _ = raw.handshake()
            raw.write(wireFrame(opcode: 2, payload: [UInt8](repeating: 1, count: 1000)))
            #expect(raw.readFrame()?.payload.count == 1000)
            let serverSide = try #require(handler.opened.first)
            #expect(await eventually { serverSide.bufferedBytes == 0 })
            raw.write(wireFrame(opcode: 8, payload: []))
            let reply = try #require(raw.readFrame())
            #expect(reply.opcode == 8 && reply.payload.isEmpty)
            #expect(await handler.wait { $0.closed.count == 1 })
            #expect(handler.closed.first?.code == .noStatusReceived)
            #expect(!serverSide.sendText("late"))
        }
    }
}
