import Foundation
import Synchronization
import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(1))) struct EndToEndTests {
    @Test func echoOverLoopback() async throws {
        try await withServer(.init(subprotocol: "switchboard.v1")) { _, port, group in
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/echo?room=1", subprotocols: ["switchboard.v1"],
                group: group, handler: client)
            #expect(connection.subprotocol == "switchboard.v1")
            #expect(connection.role == .client)
            var expected: [WebSocketMessage] = []
            for size in [0, 125, 126, 65536] {
                let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                connection.sendBinary(bytes)
                connection.sendText(String(repeating: "é", count: size / 2))
                expected += [.binary(bytes), .text(String(repeating: "é", count: size / 2))]
            }
            let id = connection.id
            #expect(await client.wait { $0.messages.filter { $0.id == id }.count == expected.count })
            #expect(client.messages(for: id) == expected)
            connection.close(code: .normalClosure, reason: "done")
            #expect(await client.wait { !$0.closed.isEmpty })
            #expect(client.closed.first?.code == .normalClosure)
        }
    }

    @Test func serverSeesPathHeadersAndOpenClose() async throws {
        let handler = RecordingHandler(echo: true)
        try await withServer(handler: handler) { server, port, group in
            let connection = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/rooms/7", headers: [("Origin", "https://app.example")],
                group: group, handler: RecordingHandler())
            #expect(await handler.wait { $0.opened.count == 1 })
            let serverSide = try #require(handler.opened.first)
            #expect(serverSide.requestPath == "/rooms/7")
            #expect(serverSide.requestHeaders["origin"] == "https://app.example")
            #expect(serverSide.remoteAddress.hasPrefix("127.0.0.1:"))
            #expect(serverSide.subprotocol == nil)
            #expect(server.connectionCount == 1)
            connection.close()
            #expect(await handler.wait { $0.closed.count == 1 })
            #expect(handler.closed.first?.code == .normalClosure)
            #expect(await eventually { server.connectionCount == 0 })
        }
    }

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

    @Test func slowConsumerIsDroppedOthersUnaffected() async throws {
        let handler = RecordingHandler()
        let configuration = WebSocketServer.Configuration(maxOutboundBytes: 256 * 1024)
        try await withServer(configuration, handler: handler) { _, port, group in
            let raw = try RawClient(port: port, receiveBufferSize: 4096)
            _ = raw.handshake()
            #expect(await handler.wait { $0.opened.count == 1 })
            let slow = handler.opened[0]
            let healthy = RecordingHandler()
            let client = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", group: group, handler: healthy)
            #expect(await handler.wait { $0.opened.count == 2 })
            let fast = handler.opened[1]

            let frame = OutboundFrame.binary([UInt8](repeating: 0xAB, count: 64 * 1024))
            var refused = false
            for _ in 0..<2000 where !refused {
                refused = !slow.send(frame)
                fast.send(.text("tick"))
                if !refused { try await Task.sleep(for: .microseconds(200)) }
            }
            #expect(refused)
            #expect(!slow.isOpen)
            #expect(await handler.wait { $0.closed.contains { $0.id == slow.id } })
            let closed = handler.closed.first { $0.id == slow.id }
            #expect(closed?.code == .policyViolation)
            #expect(closed?.reason == "slow consumer")
            fast.sendText("after")
            #expect(await healthy.wait { $0.messages.last?.message == .text("after") })
            #expect(client.isOpen && fast.isOpen)
        }
    }

    @Test func stopSendsGoingAway() async throws {
        let group = try EventLoopGroup(threads: 2)
        defer { group.shutdown() }
        let server = WebSocketServer(group: group, handler: RecordingHandler(echo: true))
        let port = try server.start()
        let client = RecordingHandler()
        _ = try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: group, handler: client)
        let raw = try RawClient(port: port)
        _ = raw.handshake()
        #expect(await eventually { server.connectionCount == 2 })
        server.stop()
        #expect(raw.readCloseCode() == 1001)
        #expect(await client.wait { $0.closed.count == 1 })
        #expect(client.closed.first?.code == .goingAway)
        #expect(throws: (any Error).self) { _ = try RawClient(port: port) }
    }

    @Test func oneFrameFansOutToFiftyConnections() async throws {
        let handler = RecordingHandler()
        try await withServer(handler: handler) { _, port, group in
            let receivers = RecordingHandler()
            var clients: [WebSocketConnection] = []
            for _ in 0..<50 {
                clients.append(
                    try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: group, handler: receivers))
            }
            #expect(await handler.wait { $0.opened.count == 50 })
            let frame = OutboundFrame.binary(Array("broadcast".utf8))
            for connection in handler.opened { #expect(connection.send(frame)) }
            #expect(await receivers.wait { $0.messages.count == 50 })
            for client in clients {
                #expect(receivers.messages(for: client.id) == [.binary(Array("broadcast".utf8))])
            }
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

    @Test func clientRefusesServerWithoutRequiredSubprotocol() async throws {
        try await withServer(.init(subprotocol: "switchboard.v1")) { _, port, group in
            await #expect(throws: WebSocketClientError.self) {
                _ = try await WebSocketClient.connect(
                    to: "ws://127.0.0.1:\(port)/", subprotocols: ["other"], group: group,
                    handler: RecordingHandler())
            }
        }
    }

    @Test func connectTimesOutWhenServerNeverAnswers() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        // A listening socket nobody accepts from: TCP connects, the handshake never completes.
        let fd = try Socket.listen(on: SocketAddress.resolve(host: "127.0.0.1", port: 0))
        defer { close(fd) }
        let port = try #require(Socket.localAddress(fd)?.port)
        let start = Date()
        await #expect(throws: WebSocketClientError.timedOut) {
            _ = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", timeout: .milliseconds(200), group: group,
                handler: RecordingHandler())
        }
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func connectRefused() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let fd = try Socket.listen(on: SocketAddress.resolve(host: "127.0.0.1", port: 0))
        let port = try #require(Socket.localAddress(fd)?.port)
        close(fd)
        await #expect(throws: WebSocketClientError.self) {
            _ = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", timeout: .seconds(2), group: group, handler: RecordingHandler())
        }
    }

    @Test func sendsFromManyThreadsArriveInOrderPerThread() async throws {
        try await withServer(handler: RecordingHandler()) { server, port, group in
            let receiver = RecordingHandler()
            let client = try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: group, handler: receiver)
            #expect(await eventually { server.connectionCount == 1 })
            _ = client
            let handler = server.handler as! RecordingHandler
            let connection = handler.opened[0]
            await withTaskGroup(of: Void.self) { tasks in
                for sender in 0..<4 {
                    tasks.addTask {
                        for index in 0..<250 { connection.sendText("\(sender):\(index)") }
                    }
                }
            }
            #expect(await receiver.wait { $0.messages.count == 1000 })
            var last = [Int](repeating: -1, count: 4)
            for case .text(let text) in receiver.messages(for: client.id) {
                let parts = text.split(separator: ":").compactMap { Int($0) }
                #expect(parts[1] == last[parts[0]] + 1)
                last[parts[0]] = parts[1]
            }
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

    @Test func closedConnectionsAreReleased() async throws {
        final class Forgetful: WebSocketHandler {
            func webSocketOpened(_ connection: WebSocketConnection) {}
            func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {}
            func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {}
        }
        try await withServer(handler: RecordingHandler(echo: true)) { server, port, group in
            weak var weakClient: WebSocketConnection?
            do {
                let client = try await WebSocketClient.connect(
                    to: "ws://127.0.0.1:\(port)/", group: group, handler: Forgetful())
                weakClient = client
                client.sendText("x")
                client.close()
            }
            #expect(await eventually { weakClient == nil })
            #expect(await eventually { server.connectionCount == 0 })
        }
    }

    @Test func aBurstOfSendsWakesTheLoopOnceAndIsWrittenInOneBatch() async throws {
        let handler = RecordingHandler()
        try await withServer(handler: handler) { _, port, _ in
            let raw = try RawClient(port: port)
            _ = raw.handshake()
            #expect(await handler.wait { $0.opened.count == 1 })
            let connection = handler.opened[0]
            let loop = connection.eventLoop
            // Hold the loop busy so every send below queues behind one pending wake-up.
            let gate = DispatchSemaphore(value: 0)
            let parked = DispatchSemaphore(value: 0)
            loop.execute {
                parked.signal()
                gate.wait()
            }
            parked.wait()
            let before = loop.wakeupCount
            let frame = OutboundFrame.binary([1, 2, 3])
            for _ in 0..<1000 { #expect(connection.send(frame)) }
            #expect(loop.wakeupCount - before <= 1)
            #expect(connection.bufferedBytes == 1000 * frame.count)
            gate.signal()
            for _ in 0..<1000 {
                guard raw.readFrame()?.payload == [1, 2, 3] else {
                    Issue.record("frame missing")
                    break
                }
            }
            #expect(await eventually { connection.bufferedBytes == 0 })
        }
    }

    @Test func pingFloodWithoutReadingIsDroppedAsSlowConsumer() async throws {
        let handler = RecordingHandler()
        try await withServer(.init(maxOutboundBytes: 64 * 1024), handler: handler) { _, port, _ in
            let raw = try RawClient(port: port, receiveBufferSize: 4096)
            _ = raw.handshake()
            let batch = (0..<1000).flatMap { _ in wireFrame(opcode: 9, payload: [UInt8](repeating: 7, count: 125)) }
            for _ in 0..<200 where handler.closed.isEmpty {
                guard raw.tryWrite(batch) else { break }
            }
            #expect(await handler.wait { $0.closed.count == 1 })
            #expect(handler.closed.first?.code == .policyViolation)
        }
    }

    @Test func cancellingConnectStopsIt() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let fd = try Socket.listen(on: SocketAddress.resolve(host: "127.0.0.1", port: 0))
        defer { close(fd) }
        let port = try #require(Socket.localAddress(fd)?.port)
        let attempt = Task {
            try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", timeout: .seconds(30), group: group, handler: RecordingHandler())
        }
        try await Task.sleep(for: .milliseconds(50))
        attempt.cancel()
        await #expect(throws: WebSocketClientError.cancelled) { _ = try await attempt.value }
    }
}
