/// libFuzzer target: the WebSocket frame parser, fed the input whole, in chunks, and in chunks
/// parsed where they were read (`parseRead`, as a connection's engine reads its socket).
///
/// Byte 0 picks the role (bit 0) and the chunk size (the rest); the parser must report the same
/// events and the same error every way, and never crash, hang or buffer past its limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let role: WebSocketRole = data[0] & 1 == 0 ? .server : .client
    let chunkSize = Int(data[0] >> 1) + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = parse(input, role: role, chunkSize: input.count + 1)
    let chunked = parse(input, role: role, chunkSize: chunkSize)
    guard whole.events == chunked.events, whole.error == chunked.error else {
        fatalError("whole \(whole) != chunked \(chunked)")
    }
    let read = parse(input, role: role, chunkSize: chunkSize, inPlace: true)
    guard whole.events == read.events, whole.error == read.error else {
        fatalError("whole \(whole) != read in place \(read)")
    }
    return 0
}

private let maxMessageBytes = 1024

/// The events `input` gives in chunks of `chunkSize`, appended and parsed in the parser's buffer
/// or (`inPlace`) each parsed where it was read, a one-frame binary message lent there.
private func parse(
    _ input: [UInt8], role: WebSocketRole, chunkSize: Int, inPlace: Bool = false
) -> (events: [WebSocketEvent], error: WebSocketProtocolError?) {
    var parser = WebSocketParser(role: role, maxMessageBytes: maxMessageBytes)
    var events: [WebSocketEvent] = []
    func take(_ event: WebSocketEvent) {
        if case .message(let message) = event, message.byteCount > maxMessageBytes {
            fatalError("message of \(message.byteCount) bytes passed the limit")
        }
        events.append(event)
    }
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        var chunk = Array(input[offset..<end])
        offset = end
        do throws(WebSocketProtocolError) {
            if inPlace {
                try chunk.withUnsafeMutableBytes { bytes in
                    Result { () throws(WebSocketProtocolError) in
                        try parser.parseRead(bytes) { frame, _ in
                            switch frame {
                            case .event(let event): take(event)
                            case .binary(let message): take(.message(.binary(Array(message))))
                            }
                            return true
                        }
                    }
                }.get()
            } else {
                parser.append(chunk)
                while let event = try parser.next() { take(event) }
            }
        } catch {
            return (events, error)
        }
        if parser.bufferedByteCount > maxMessageBytes + 2 * FrameHeader.maxLength + chunkSize {
            fatalError("parser buffers \(parser.bufferedByteCount) bytes")
        }
    }
    return (events, nil)
}

extension WebSocketMessage {
    fileprivate var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}
