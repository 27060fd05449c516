extension OutboundFrame {
    /// Bytes that are not a WebSocket frame (an HTTP handshake head), queued the same way.
    static func raw(_ bytes: [UInt8]) -> OutboundFrame {
        wrapping(rawBytes: bytes)
    }
}
