/// Pure state machine that turns the inbound bytes of a WebSocket connection into events:
/// it checks every framing rule of RFC 6455, reassembles fragmented messages, validates text
/// as UTF-8 as soon as bytes arrive, and enforces the message size limit from frame headers
/// before buffering any payload.
public struct WebSocketParser: Sendable {
    /// Which end is parsing: a server expects masked frames, a client unmasked ones.
    public let role: WebSocketRole
    /// Largest accepted message (sum of its fragments), in bytes.
    public let maxMessageBytes: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var failure: WebSocketProtocolError?
    private var fragmentOpcode: WebSocketOpcode?
    private var fragments: [UInt8] = []
    private var validator = UTF8Validator()
    private var validatedInFrame = 0

    /// Creates a parser for `role` accepting messages up to `maxMessageBytes`.
    public init(role: WebSocketRole, maxMessageBytes: Int) {
        self.role = role
        self.maxMessageBytes = maxMessageBytes
    }

    /// Frames consumed so far, of every opcode (fragments and control frames included).
    public private(set) var framesParsed = 0

    /// Bytes received but not yet consumed by a complete frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Appends bytes read from the peer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes read from the peer.
    public mutating func append(_ bytes: [UInt8]) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next event, or nil when more bytes are needed. After an error every later
    /// call throws the same error.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketEvent? {
        switch try nextFrame() {
        case nil: nil
        case .event(let event): event
        case .binaryInPlace(let range): .message(.binary(Array(buffer[range])))
        }
    }

    /// What `nextFrame` found.
    private enum ParsedFrame {
        case event(WebSocketEvent)
        /// A binary message of one frame, unmasked where it was received.
        case binaryInPlace(Range<Int>)
    }

    /// The next frame in the read buffer; a binary message of one frame is left there.
    private mutating func nextFrame() throws(WebSocketProtocolError) -> ParsedFrame? {
        try withBuffer { (parser, bytes, index) throws(WebSocketProtocolError) in try parser.nextFrame(in: bytes, at: &index) }
    }

    /// What `parseRead` hands over: an event, or a binary message of one frame, lent where it lies
    /// (valid during the call only).
    enum ReadFrame {
        case event(WebSocketEvent)
        case binary(UnsafeRawBufferPointer)
    }

    /// Parses the frames of one read, `bytes` (the stream's buffer, lent for the call), handing
    /// each to `body` in order, with `framesParsed` after it (`body` must not reach the parser),
    /// until `body` returns false. While the parser holds no bytes of an
    /// earlier read (the usual case), the frames are parsed, and a binary message unmasked, in
    /// `bytes` itself, and only an incomplete last frame is copied, for the next read to finish;
    /// otherwise `bytes` is appended to what the parser holds and parsed there.
    mutating func parseRead(
        _ bytes: UnsafeMutableRawBufferPointer, _ body: (ReadFrame, _ framesParsed: Int) -> Bool
    ) throws(WebSocketProtocolError) {
        guard bufferedByteCount == 0 else {
            append(UnsafeRawBufferPointer(bytes))
            _ = try withBuffer { (parser, bytes, index) throws(WebSocketProtocolError) in
                try parser.handOver(bytes, from: &index, to: body)
            }
            return
        }
        var index = 0
        guard try handOver(bytes, from: &index, to: body), index < bytes.count else { return }
        append(UnsafeRawBufferPointer(rebasing: bytes[index...]))
    }

    /// Hands `body` the frames of `bytes` from `index` on; true once the rest is an incomplete
    /// frame (or nothing), false when `body` stopped.
    private mutating func handOver(
        _ bytes: UnsafeMutableRawBufferPointer, from index: inout Int, to body: (ReadFrame, _ framesParsed: Int) -> Bool
    ) throws(WebSocketProtocolError) -> Bool {
        while let frame = try nextFrame(in: bytes, at: &index) {
            let goOn = switch frame {
            case .event(let event): body(.event(event), framesParsed)
            case .binaryInPlace(let range): body(.binary(UnsafeRawBufferPointer(rebasing: bytes[range])), framesParsed)
            }
            if !goOn { return false }
        }
        return true
    }

    /// Runs `body` with the read buffer's bytes and the index of the first unparsed one. The
    /// buffer is taken out for the call (not copied: it stays uniquely referenced), so that the
    /// parse can change the parser's other state while it reads the bytes in place.
    private mutating func withBuffer<Result>(
        _ body: (inout WebSocketParser, UnsafeMutableRawBufferPointer, inout Int) throws(WebSocketProtocolError) -> Result
    ) throws(WebSocketProtocolError) -> Result {
        var held = buffer
        buffer = []
        var index = readIndex
        defer { (buffer, readIndex) = (held, index) }
        return try held.withUnsafeMutableBytes { bytes in
            Swift.Result { () throws(WebSocketProtocolError) in try body(&self, bytes, &index) }
        }.get()
    }

    /// Parses the next frame of `bytes` from `index` on, moving `index` past it; nil when the rest
    /// is an incomplete frame. A `.binaryInPlace` range is one of `bytes`.
    private mutating func nextFrame(
        in bytes: UnsafeMutableRawBufferPointer, at index: inout Int
    ) throws(WebSocketProtocolError) -> ParsedFrame? {
        if let failure { throw failure }
        do {
            return try parseNext(in: bytes, at: &index)
        } catch {
            failure = error
            throw error
        }
    }

    /// Gives the read buffer's memory back when every byte received has been consumed.
    public mutating func releaseBufferIfConsumed() {
        guard readIndex == buffer.count, buffer.capacity > 0 else { return }
        buffer = []
        readIndex = 0
    }

    private mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else {
            buffer.removeSubrange(0..<readIndex)
        }
        readIndex = 0
    }

    private mutating func parseNext(
        in bytes: UnsafeMutableRawBufferPointer, at readIndex: inout Int
    ) throws(WebSocketProtocolError) -> ParsedFrame? {
        while true {
            let start = readIndex
            guard let header = FrameHeader.parse(UnsafeRawBufferPointer(rebasing: bytes[start...])) else { return nil }
            let opcode = try check(header)
            let length = Int(header.payloadLength)
            let payloadStart = start + header.headerLength
            let available = bytes.count - payloadStart
            let isText = opcode == .text || (opcode == .continuation && fragmentOpcode == .text)
            if isText {
                if opcode == .text && validatedInFrame == 0 { validator = UTF8Validator() }
                try validateText(header, in: bytes, payloadStart: payloadStart, upTo: min(available, length))
            }
            guard available >= length else { return nil }
            let range = payloadStart..<(payloadStart + length)
            if let key = header.maskKey { applyMask(key, to: UnsafeMutableRawBufferPointer(rebasing: bytes[range])) }
            readIndex = range.upperBound
            validatedInFrame = 0
            framesParsed += 1
            if opcode == .binary && header.fin { return .binaryInPlace(range) }
            if let event = try handle(opcode, fin: header.fin, payload: Array(UnsafeRawBufferPointer(rebasing: bytes[range]))) {
                return .event(event)
            }
        }
    }

    private func check(_ header: FrameHeader) throws(WebSocketProtocolError) -> WebSocketOpcode {
        guard header.reservedBits == 0 else {
            throw WebSocketProtocolError(.protocolError, "reserved bits set")
        }
        guard let opcode = WebSocketOpcode(rawValue: header.opcodeValue) else {
            throw WebSocketProtocolError(.protocolError, "unknown opcode")
        }
        switch (role, header.maskKey != nil) {
        case (.server, false): throw WebSocketProtocolError(.protocolError, "frame not masked")
        case (.client, true): throw WebSocketProtocolError(.protocolError, "frame masked")
        default: break
        }
        if opcode.isControl {
            guard header.fin else {
                throw WebSocketProtocolError(.protocolError, "fragmented control frame")
            }
            guard header.payloadLength <= 125 else {
                throw WebSocketProtocolError(.protocolError, "control frame too long")
            }
            return opcode
        }
        guard header.payloadLength >> 63 == 0 else {
            throw WebSocketProtocolError(.protocolError, "invalid payload length")
        }
        if opcode == .continuation && fragmentOpcode == nil {
            throw WebSocketProtocolError(.protocolError, "continuation without a message")
        }
        if opcode != .continuation && fragmentOpcode != nil {
            throw WebSocketProtocolError(.protocolError, "new message inside a fragmented one")
        }
        if header.payloadLength > UInt64(maxMessageBytes - fragments.count) {
            throw WebSocketProtocolError(.messageTooBig, "message too big")
        }
        return opcode
    }

    private mutating func validateText(
        _ header: FrameHeader, in bytes: UnsafeMutableRawBufferPointer, payloadStart: Int, upTo end: Int
    ) throws(WebSocketProtocolError) {
        guard end > validatedInFrame else { return }
        let from = validatedInFrame
        var chunk = Array(UnsafeRawBufferPointer(rebasing: bytes[(payloadStart + from)..<(payloadStart + end)]))
        if let key = header.maskKey {
            chunk.withUnsafeMutableBytes { applyMask(key, to: $0, offset: from) }
        }
        validatedInFrame = end
        guard validator.feed(chunk) else {
            throw WebSocketProtocolError(.invalidPayload, "invalid UTF-8 in text message")
        }
    }

    private mutating func handle(
        _ opcode: WebSocketOpcode, fin: Bool, payload: [UInt8]
    ) throws(WebSocketProtocolError) -> WebSocketEvent? {
        switch opcode {
        case .ping:
            return .ping(payload)
        case .pong:
            return .pong(payload)
        case .close:
            return try Self.parseClose(payload)
        case .text, .binary:
            if fin { return try complete(opcode, payload) }
            fragmentOpcode = opcode
            fragments = payload
            return nil
        case .continuation:
            fragments.append(contentsOf: payload)
            guard fin, let messageOpcode = fragmentOpcode else { return nil }
            let data = fragments
            fragments = []
            fragmentOpcode = nil
            return try complete(messageOpcode, data)
        }
    }

    private func complete(
        _ opcode: WebSocketOpcode, _ data: [UInt8]
    ) throws(WebSocketProtocolError) -> WebSocketEvent {
        guard opcode == .text else { return .message(.binary(data)) }
        guard validator.isAtBoundary else {
            throw WebSocketProtocolError(.invalidPayload, "truncated UTF-8 in text message")
        }
        return .message(.text(String(decoding: data, as: UTF8.self)))
    }

    /// Decodes and validates a close frame payload.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketEvent {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else {
            throw WebSocketProtocolError(.protocolError, "close payload of one byte")
        }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isSendable else {
            throw WebSocketProtocolError(.protocolError, "invalid close code")
        }
        let reason = Array(payload[2...])
        guard UTF8Validator.isValid(reason) else {
            throw WebSocketProtocolError(.invalidPayload, "invalid UTF-8 in close reason")
        }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }
}
