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
}
