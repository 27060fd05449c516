/// Receives the life of WebSocket connections. Every call for one connection happens on that
/// connection's event loop thread, in order: opened, any number of messages, closed once.
/// The calls share the loop with every other connection on it, so they must return quickly and
/// never block; hand slow work to another task or actor.
public protocol WebSocketHandler: Sendable {
    /// The handshake completed; the connection can send.
    func webSocketOpened(_ connection: WebSocketConnection)
    /// A complete data message arrived.
    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage)
    /// A binary message of one frame arrived; `bytes` are valid only during the call (they are
    /// read where they were received, without a copy). By default they are copied into a
    /// `WebSocketMessage` for `webSocket(_:received:)`.
    func webSocket(_ connection: WebSocketConnection, receivedBinary bytes: UnsafeRawBufferPointer)
    /// The messages of one read from the socket have all been handed over (none may have been):
    /// what a handler does once per read rather than once per message goes here. By default
    /// nothing.
    func webSocketReadEnded(_ connection: WebSocketConnection)
    /// The connection stopped being open; no more messages follow. `code` is the peer's close
    /// code when the peer closed (`.noStatusReceived` for a close frame without one), the code
    /// this side sent when it closed (including protocol errors and slow consumers), and nil
    /// when the connection dropped without a close frame.
    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String)
}

extension WebSocketHandler {
    public func webSocketReadEnded(_ connection: WebSocketConnection) {}

    public func webSocket(_ connection: WebSocketConnection, receivedBinary bytes: UnsafeRawBufferPointer) {
        webSocket(connection, received: .binary(Array(bytes)))
    }
}
