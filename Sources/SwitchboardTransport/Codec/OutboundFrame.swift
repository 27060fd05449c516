/// A complete WebSocket frame, header and payload encoded once into one immutable buffer, so
/// the same instance can be queued to any number of connections without copying.
///
/// Frames built with the static constructors are unmasked (server to client); a client
/// connection derives a masked copy when it sends one.
public final class OutboundFrame: @unchecked Sendable {
    // Sendable proof: `storage` is allocated and fully written in `init` before `self` can be
    // shared, never mutated afterwards, and freed only in `deinit`, when no reference remains.
    // Every other stored property is an immutable `let` of a Sendable type.
    private let storage: UnsafeMutableRawBufferPointer

    /// The frame's opcode.
    public let opcode: WebSocketOpcode
    /// Size of the encoded header, in bytes.
    public let headerLength: Int

    /// Encodes one frame of `opcode` carrying `payload`, masked with `maskKey` if given.
    public convenience init(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true,
        maskKey: (UInt8, UInt8, UInt8, UInt8)? = nil
    ) {
        self.init(opcode: opcode, payloadCount: payload.count, fin: fin, maskKey: maskKey) {
            if payload.count > 0 { $0.copyMemory(from: payload) }
        }
    }

    /// Encodes one frame of `opcode` carrying `payload`.
    public convenience init(opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true) {
        self.init(opcode: opcode, payloadCount: payload.count, fin: fin, maskKey: nil) { body in
            payload.withUnsafeBytes { if $0.count > 0 { body.copyMemory(from: $0) } }
        }
    }

    private init(
        opcode: WebSocketOpcode, payloadCount: Int, fin: Bool,
        maskKey: (UInt8, UInt8, UInt8, UInt8)?, fill: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let headerLength = FrameHeader.encodedLength(
            payloadLength: payloadCount, masked: maskKey != nil)
        storage = .allocate(byteCount: headerLength + payloadCount, alignment: 8)
        FrameHeader.write(
            fin: fin, opcode: opcode, payloadLength: payloadCount, maskKey: maskKey,
            into: storage)
        let body = UnsafeMutableRawBufferPointer(rebasing: storage[headerLength...])
        fill(body)
        if let maskKey { applyMask(maskKey, to: body) }
        self.opcode = opcode
        self.headerLength = headerLength
    }

    /// Wraps bytes that are sent verbatim (used for handshake heads); never empty.
    init(rawBytes: [UInt8]) {
        precondition(!rawBytes.isEmpty, "a raw write needs bytes")
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: rawBytes.count, alignment: 8)
        rawBytes.withUnsafeBytes { if $0.count > 0 { storage.copyMemory(from: $0) } }
        self.storage = storage
        opcode = .binary
        headerLength = 0
    }

    deinit { storage.deallocate() }

    /// A binary message frame.
    public static func binary(_ payload: [UInt8]) -> OutboundFrame {
        OutboundFrame(opcode: .binary, payload: payload)
    }

    /// A text message frame.
    public static func text(_ string: String) -> OutboundFrame {
        var string = string
        return string.withUTF8 { OutboundFrame(opcode: .text, payload: UnsafeRawBufferPointer($0)) }
    }

    /// A ping frame (payload at most 125 bytes).
    public static func ping(_ payload: [UInt8] = []) -> OutboundFrame {
        OutboundFrame(opcode: .ping, payload: Array(payload.prefix(125)))
    }

    /// A pong frame (payload at most 125 bytes).
    public static func pong(_ payload: [UInt8]) -> OutboundFrame {
        OutboundFrame(opcode: .pong, payload: Array(payload.prefix(125)))
    }

    /// A close frame; the reason is cut at a character boundary to fit a control frame.
    public static func close(code: WebSocketCloseCode?, reason: String = "") -> OutboundFrame {
        OutboundFrame(opcode: .close, payload: closePayload(code: code, reason: reason))
    }

    static func closePayload(code: WebSocketCloseCode?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var budget = 123
        for character in reason {
            let utf8 = Array(String(character).utf8)
            guard utf8.count <= budget else { break }
            budget -= utf8.count
            payload.append(contentsOf: utf8)
        }
        return payload
    }

    /// Total encoded size in bytes.
    public var count: Int { storage.count }

    /// The encoded frame, header followed by payload.
    public var bytes: [UInt8] { Array(storage) }

    /// The encoded payload (masked if this frame is masked).
    public var payload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[headerLength...])
    }

    /// The whole encoded frame; valid as long as this instance is alive.
    var encoded: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }

    /// A copy of this unmasked frame with its payload masked by `key`, for the client role.
    func masked(with key: (UInt8, UInt8, UInt8, UInt8)) -> OutboundFrame {
        let fin = storage[0] & 0x80 != 0
        return OutboundFrame(opcode: opcode, payload: payload, fin: fin, maskKey: key)
    }
}
