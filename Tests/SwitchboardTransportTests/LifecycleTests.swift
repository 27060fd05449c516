import SwitchboardTestKit
import Foundation
import Synchronization
import Testing
@testable import SwitchboardTransport

/// Starting, stopping, connecting and releasing.
@Suite(.timeLimit(.minutes(1))) struct LifecycleTests {
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
        // The listener is closed: a new client does not reach this server. (Whether the connect
        // fails proves nothing: a test running alongside may have been given the port since.)
        #expect(await eventually { server.connectionCount == 0 })
        // The probe's handshake is the fence: had this server taken the probe in, it would have
        // counted it before answering, as it counted `raw` above.
        let probe = try? RawClient(port: port)
        _ = probe?.handshake()
        #expect(server.connectionCount == 0)
        withExtendedLifetime(probe) {}
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
        await #expect(throws: WebSocketClientError.timedOut) {
            _ = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", timeout: .milliseconds(200), group: group,
                handler: RecordingHandler())
        }
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
