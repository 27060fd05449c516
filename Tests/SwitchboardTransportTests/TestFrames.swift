@testable import SwitchboardTransport

/// Encodes a frame the way a peer would put it on the wire, with full control over every bit.
func wireFrame(
    fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, payload: [UInt8],
    mask: (UInt8, UInt8, UInt8, UInt8)? = (0x12, 0x34, 0x56, 0x78), lengthOverride: UInt64? = nil
) -> [UInt8] {
    var out: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    let length = lengthOverride ?? UInt64(payload.count)
    if length < 126 {
        out.append(maskBit | UInt8(length))
    } else if length <= 0xFFFF {
        out.append(maskBit | 126)
        out += [UInt8(length >> 8), UInt8(length & 0xFF)]
    } else {
        out.append(maskBit | 127)
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: length >> UInt64(56 - 8 * i))) }
    }
    var body = payload
    if let mask {
        out += [mask.0, mask.1, mask.2, mask.3]
        let k = [mask.0, mask.1, mask.2, mask.3]
        for i in body.indices { body[i] ^= k[i & 3] }
    }
    return out + body
}

/// Feeds `bytes` to a fresh parser and collects events until it needs more or fails.
func parseAll(
    _ bytes: [UInt8], role: WebSocketRole = .server, maxMessageBytes: Int = 1 << 20
) -> (events: [WebSocketEvent], error: WebSocketProtocolError?) {
    var parser = WebSocketParser(role: role, maxMessageBytes: maxMessageBytes)
    parser.append(bytes)
    var events: [WebSocketEvent] = []
    do {
        while let event = try parser.next() { events.append(event) }
        return (events, nil)
    } catch {
        return (events, error)
    }
}

/// Parses `reads` one after another with `parseRead`, as a connection's engine reads its socket:
/// each in its own buffer, which the parser may unmask in place. A binary message lent in place
/// is copied out as `.message(.binary(…))`; `lent` counts those lent in their read's own bytes
/// (the others lay in the parser's buffer), and `stopAfter` stops handing over frames of a read
/// after that many (as an engine does when closing).
func parseReads(
    _ reads: [[UInt8]], role: WebSocketRole = .server, maxMessageBytes: Int = 1 << 20,
    parser: inout WebSocketParser, stopAfter: Int? = nil
) -> (events: [WebSocketEvent], error: WebSocketProtocolError?, lent: Int) {
    var events: [WebSocketEvent] = []
    var lent = 0
    for read in reads {
        var read = read
        var handed = 0
        let failure = read.withUnsafeMutableBytes { bytes -> WebSocketProtocolError? in
            do throws(WebSocketProtocolError) {
                try parser.parseRead(bytes) { frame, _ in
                    switch frame {
                    case .event(let event): events.append(event)
                    case .binary(let message):
                        events.append(.message(.binary(Array(message))))
                        let read = UnsafeRawBufferPointer(bytes)
                        if let start = message.baseAddress, let base = read.baseAddress, start >= base,
                            start + message.count <= base + read.count
                        {
                            lent += 1
                        }
                    }
                    handed += 1
                    return stopAfter.map { handed < $0 } ?? true
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure { return (events, failure, lent) }
    }
    return (events, nil, lent)
}

/// `parseReads` with a fresh parser.
func parseReads(
    _ reads: [[UInt8]], role: WebSocketRole = .server, maxMessageBytes: Int = 1 << 20
) -> (events: [WebSocketEvent], error: WebSocketProtocolError?, lent: Int) {
    var parser = WebSocketParser(role: role, maxMessageBytes: maxMessageBytes)
    return parseReads(reads, role: role, maxMessageBytes: maxMessageBytes, parser: &parser)
}
