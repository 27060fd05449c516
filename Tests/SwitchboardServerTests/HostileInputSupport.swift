import Foundation
import Synchronization
import SwitchboardTestKit
import SwitchboardServer
import SwitchboardTransport
import SwitchboardCore
import SwitchboardWire

/// A raw WebSocket peer's view of a connection: messages and the close it saw.
final class PeerRecorder: WebSocketHandler {
    private struct State {
        var messages: [ServerFrame] = []
        var closed: (code: WebSocketCloseCode?, reason: String)?
    }

    private let state = Mutex(State())

    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .binary(let bytes) = message, let frame = try? ServerFrame.decode(bytes) else { return }
        state.withLock { $0.messages.append(frame) }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        state.withLock { $0.closed = (code, reason) }
    }

    var messages: [ServerFrame] { state.withLock { $0.messages } }
    var closed: (code: WebSocketCloseCode?, reason: String)? { state.withLock { $0.closed } }
}

/// Collects a server's log lines.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    /// A log at info level writing here.
    var log: ServerLog { ServerLog(level: .info) { line in self.append(line) } }

    private func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// The lines containing every one of `parts`.
    func matching(_ parts: String...) -> [String] {
        lines.withLock { $0.filter { line in parts.allSatisfy { line.contains($0) } } }
    }
}


/// Opens a raw `switchboard.v1` connection to `server`.
func connectRaw(
    to server: SwitchboardServer, group: EventLoopGroup, recorder: PeerRecorder,
    headers: [(String, String)] = []
) async throws -> WebSocketConnection {
    try await WebSocketClient.connect(
        to: server.url, subprotocols: [Wire.subprotocol], headers: headers, timeout: .seconds(5),
        group: group, handler: recorder)
}

/// Sends a login for `userId` and waits for its answer.
func logIn(_ connection: WebSocketConnection, _ recorder: PeerRecorder, as userId: String) async -> Bool {
    let login = ClientFrame(id: 1, .session(.login(Login(appId: "app", userId: userId, token: ""))))
    connection.sendBinary(login.encode())
    return await eventually {
        recorder.messages.contains { if case .answer(_, .session(.login)) = $0 { true } else { false } }
    }
}
