import SwitchboardTestKit
import Foundation
import Synchronization
import Testing
@testable import SwitchboardTransport

/// Messages travel both ways between the server and the client.
@Suite(.timeLimit(.minutes(1))) struct EchoTests {
    @Test func echoOverLoopback() async throws {
        try await withServer(.init(subprotocol: "switchboard.v1")) { _, port, group in
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/echo?room=1", subprotocols: ["switchboard.v1"],
                group: group, handler: client)
            #expect(connection.subprotocol == "switchboard.v1")
            #expect(connection.role == .client)
            await expectEchoRoundTrip(over: connection, seenBy: client)
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

    @Test func aHandlerFindsItsContextInEveryCallAndTheConnectionLetsItGoOnceClosed() async throws {
        let handler = ContextHandler()
        let group = try EventLoopGroup(threads: 2)
        defer { group.shutdown() }
        let server = WebSocketServer(group: group, handler: handler)
        let port = try server.start()
        defer { server.stop() }
        let client = RecordingHandler()
        let connection = try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: group, handler: client)
        connection.sendBinary([1, 2, 3])
        connection.sendText("hi")
        #expect(await eventually { handler.seen.withLock { $0.count } == 3 })
        connection.close()
        #expect(await eventually { handler.seen.withLock { $0.count } == 4 })
        #expect(handler.seen.withLock { $0 } == ["opened", "binary 3: mine", "text: mine", "closed: mine"])
        // Nothing but the connection held the context: it is gone with the connection's engine.
        #expect(await eventually { handler.contexts.withLock { $0.allSatisfy { $0.value == nil } } })
    }

    @Test func aServerThatKeepsNoHeadersStillSeesThePath() async throws {
        let handler = RecordingHandler(echo: true)
        var configuration = WebSocketServer.Configuration()
        configuration.keepsRequestHeaders = false
        try await withServer(configuration, handler: handler) { _, port, group in
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/rooms/8", headers: [("Origin", "https://app.example")],
                group: group, handler: client)
            #expect(await handler.wait { $0.opened.count == 1 })
            let serverSide = try #require(handler.opened.first)
            #expect(serverSide.requestPath == "/rooms/8")
            #expect(serverSide.requestHeaders.isEmpty)
            await expectEchoRoundTrip(over: connection, seenBy: client)
        }
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

    @Test func sendsFromManyThreadsArriveInOrderPerThread() async throws {
        try await withServer(handler: RecordingHandler()) { server, port, group in
            let receiver = RecordingHandler()
            let client = try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: group, handler: receiver)
            _ = client
            // Counted by the server before its handler is told: wait for the handler, not the count
            // (reading `opened[0]` between the two crashed a whole run beside two busy loops).
            let handler = server.handler as! RecordingHandler
            #expect(await handler.wait { $0.opened.count == 1 })
            let connection = try #require(handler.opened.first)
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
}

/// Keeps an object with each connection as its context and records whether each call finds it.
private final class ContextHandler: WebSocketHandler {
    final class Context {
        let id: UInt64
        init(id: UInt64) { self.id = id }
    }

    struct WeakContext: @unchecked Sendable {
        // Sendable proof: only ever read to check whether the object is gone.
        weak var value: Context?
    }

    let seen = Mutex<[String]>([])
    let contexts = Mutex<[WeakContext]>([])

    private func whose(_ connection: WebSocketConnection) -> String {
        (connection.handlerContext as? Context)?.id == connection.id ? "mine" : "missing"
    }

    func webSocketOpened(_ connection: WebSocketConnection) {
        let context = Context(id: connection.id)
        connection.handlerContext = context
        contexts.withLock { $0.append(WeakContext(value: context)) }
        seen.withLock { $0.append("opened") }
    }

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        let name = if case .text = message { "text" } else { "binary copied" }
        seen.withLock { $0.append("\(name): \(whose(connection))") }
    }

    func webSocket(_ connection: WebSocketConnection, receivedBinary bytes: UnsafeRawBufferPointer) {
        seen.withLock { $0.append("binary \(bytes.count): \(whose(connection))") }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        seen.withLock { $0.append("closed: \(whose(connection))") }
    }
}
