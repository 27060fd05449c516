/// The fixed part of a WebSocket frame: flags, opcode, length and masking key (RFC 6455 5.2).
public struct FrameHeader: Sendable, Equatable {
    /// Final fragment of a message.
    public var fin: Bool
    /// The three reserved bits, shifted down (0 when no extension is negotiated).
    public var reservedBits: UInt8
    /// The raw 4-bit opcode.
    public var opcodeValue: UInt8
    /// The masking key, or nil for an unmasked frame.
    public var maskKey: (UInt8, UInt8, UInt8, UInt8)?
    /// The payload length as declared on the wire.
    public var payloadLength: UInt64
    /// Number of bytes the header occupies on the wire.
    public var headerLength: Int

    /// Largest header: 2 bytes + 8-byte length + 4-byte mask.
    public static let maxLength = 14

    /// Parses a header from the start of `bytes`; nil when more bytes are needed.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> FrameHeader? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[0]
        let second = bytes[1]
        let masked = second & 0x80 != 0
        let shortLength = second & 0x7F
        let lengthBytes = shortLength == 126 ? 2 : (shortLength == 127 ? 8 : 0)
        let headerLength = 2 + lengthBytes + (masked ? 4 : 0)
        guard bytes.count >= headerLength else { return nil }
        var length = UInt64(shortLength)
        if lengthBytes > 0 {
            length = 0
            for i in 0..<lengthBytes { length = length << 8 | UInt64(bytes[2 + i]) }
        }
        var key: (UInt8, UInt8, UInt8, UInt8)?
        if masked {
            let k = 2 + lengthBytes
            key = (bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3])
        }
        return FrameHeader(
            fin: first & 0x80 != 0, reservedBits: (first >> 4) & 0x7, opcodeValue: first & 0x0F,
            maskKey: key, payloadLength: length, headerLength: headerLength)
    }

    /// Bytes needed to encode a header for `payloadLength` bytes.
    public static func encodedLength(payloadLength: Int, masked: Bool) -> Int {
        let lengthBytes = payloadLength < 126 ? 0 : (payloadLength <= 0xFFFF ? 2 : 8)
        return 2 + lengthBytes + (masked ? 4 : 0)
    }

    /// Writes a header at the start of `buffer` and returns how many bytes it took.
    @discardableResult
    public static func write(
        fin: Bool, opcode: WebSocketOpcode, payloadLength: Int,
        maskKey: (UInt8, UInt8, UInt8, UInt8)?, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        buffer[0] = (fin ? 0x80 : 0) | opcode.rawValue
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        var offset = 2
        if payloadLength < 126 {
            buffer[1] = maskBit | UInt8(payloadLength)
        } else if payloadLength <= 0xFFFF {
            buffer[1] = maskBit | 126
            buffer[2] = UInt8(truncatingIfNeeded: payloadLength >> 8)
            buffer[3] = UInt8(truncatingIfNeeded: payloadLength)
            offset = 4
        } else {
            buffer[1] = maskBit | 127
            let length = UInt64(payloadLength)
            for i in 0..<8 { buffer[2 + i] = UInt8(truncatingIfNeeded: length >> UInt64(56 - 8 * i)) }
            offset = 10
        }
        if let key = maskKey {
            buffer[offset] = key.0
            buffer[offset + 1] = key.1
            buffer[offset + 2] = key.2
            buffer[offset + 3] = key.3
            offset += 4
        }
        return offset
    }

    public static func == (lhs: FrameHeader, rhs: FrameHeader) -> Bool {
        lhs.fin == rhs.fin && lhs.reservedBits == rhs.reservedBits
            && lhs.opcodeValue == rhs.opcodeValue && lhs.payloadLength == rhs.payloadLength
            && lhs.headerLength == rhs.headerLength
            && lhs.maskKey.map { [$0.0, $0.1, $0.2, $0.3] } == rhs.maskKey.map { [$0.0, $0.1, $0.2, $0.3] }
    }
}

/// Applies (or removes) a WebSocket mask in place, `offset` bytes into the payload; eight bytes
/// at a time.
func applyMask(
    _ key: (UInt8, UInt8, UInt8, UInt8), to bytes: UnsafeMutableRawBufferPointer, offset: Int = 0
) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    withUnsafeBytes(of: key) { k in
        var pattern: UInt64 = 0
        withUnsafeMutableBytes(of: &pattern) { p in
            for j in 0..<8 { p[j] = k[(offset + j) & 3] }
        }
        let count = bytes.count
        var i = 0
        while i + 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ pattern
            base.storeBytes(of: word, toByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            bytes[i] ^= k[(i + offset) & 3]
            i += 1
        }
    }
}
