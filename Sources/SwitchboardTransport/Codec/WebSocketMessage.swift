/// A complete, reassembled WebSocket data message.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message (valid UTF-8).
    case text(String)
    /// A binary message.
    case binary([UInt8])
}

/// One thing a `WebSocketParser` recognised in the inbound byte stream.
public enum WebSocketEvent: Sendable, Equatable {
    /// A complete data message.
    case message(WebSocketMessage)
    /// A ping with its payload, to be answered with a pong.
    case ping([UInt8])
    /// A pong with its payload.
    case pong([UInt8])
    /// A close frame; `code` is nil when the frame carried no status.
    case close(code: WebSocketCloseCode?, reason: String)
}
