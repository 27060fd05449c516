/// libFuzzer target: the WebSocket frame parser, fed the input whole and in chunks.
///
/// Byte 0 picks the role (bit 0) and the chunk size (the rest); the parser must report the same
/// events and the same error both ways, and never crash, hang or buffer past its limit.
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
    return 0
}

private let maxMessageBytes = 1024

private func parse(
    _ input: [UInt8], role: WebSocketRole, chunkSize: Int
) -> (events: [WebSocketEvent], error: WebSocketProtocolError?) {
    var parser = WebSocketParser(role: role, maxMessageBytes: maxMessageBytes)
    var events: [WebSocketEvent] = []
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        parser.append(Array(input[offset..<end]))
        offset = end
        do {
            while let event = try parser.next() {
                if case .message(let message) = event, message.byteCount > maxMessageBytes {
                    fatalError("message of \(message.byteCount) bytes passed the limit")
                }
                events.append(event)
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
