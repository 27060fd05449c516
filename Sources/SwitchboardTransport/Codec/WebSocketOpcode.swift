/// A WebSocket frame opcode (RFC 6455 section 5.2).
public enum WebSocketOpcode: UInt8, Sendable {
    /// Continues a fragmented message.
    case continuation = 0x0
    /// Starts a text message.
    case text = 0x1
    /// Starts a binary message.
    case binary = 0x2
    /// Close control frame.
    case close = 0x8
    /// Ping control frame.
    case ping = 0x9
    /// Pong control frame.
    case pong = 0xA

    /// True for close, ping and pong.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Which end of a WebSocket an endpoint is; decides who masks frames.
public enum WebSocketRole: Sendable {
    /// Accepts connections; expects masked frames and sends unmasked ones.
    case server
    /// Opens connections; expects unmasked frames and sends masked ones.
    case client
}
