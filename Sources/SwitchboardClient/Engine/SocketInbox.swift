import SwitchboardTransport
import SwitchboardWire
import SwitchboardCore

/// Turns one socket's callbacks into an ordered stream for the client engine.
final class SocketInbox: WebSocketHandler {
    /// What the socket delivered.
    enum Item: Sendable {
        case frame(ServerFrame)
        case undecodable(WireError)
        case closed(code: WebSocketCloseCode?, reason: String)
    }

    let stream: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .binary(let bytes) = message else { return }
        do {
            continuation.yield(.frame(try ServerFrame.decode(bytes)))
        } catch {
            continuation.yield(.undecodable(error))
        }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        continuation.yield(.closed(code: code, reason: reason))
        continuation.finish()
    }
}
