/// An incremental reader of RESP2 and RESP3 replies: feed it bytes as they arrive with `append`,
/// take whole replies with `next`.
///
/// It keeps what a half-read aggregate has so far on a stack, so a reply that arrives in many
/// small reads is read once, never re-scanned from its start; a bulk string is taken when all of
/// its bytes are there. Every length is checked against `Bounds` before anything is reserved, so a
/// hostile or broken peer can make it throw, never allocate without bound.
public struct RESPReader: Sendable {
    /// The largest reply parts the reader accepts.
    public struct Bounds: Sendable, Hashable {
        /// The longest bulk string (Redis allows 512 MB; we never store values near that).
        public var bulkBytes: Int
        /// The most elements in one aggregate (pairs count twice in a map).
        public var elements: Int
        /// The deepest nesting of aggregates.
        public var depth: Int
        /// The longest line of a simple string, error, number or header.
        public var lineBytes: Int

        /// Bounds with room for any reply Switchboard's own commands get.
        public init(bulkBytes: Int = 64 << 20, elements: Int = 1 << 22, depth: Int = 32, lineBytes: Int = 64 << 10) {
            self.bulkBytes = bulkBytes
            self.elements = elements
            self.depth = depth
            self.lineBytes = lineBytes
        }
    }

    private enum AggregateKind: Sendable {
        case array, set, push, map, attribute
    }

    /// An aggregate whose elements are still arriving.
    private struct Partial: Sendable {
        let kind: AggregateKind
        var remaining: Int
        var values: [RESPValue] = []
    }

    /// What one step of reading found.
    private enum Step {
        case value(RESPValue)
        case opened
        case incomplete
    }

    /// The bounds in force.
    public let bounds: Bounds
    private var buffer: [UInt8] = []
    private var position = 0
    private var stack: [Partial] = []

    /// A reader with nothing read yet.
    public init(bounds: Bounds = Bounds()) {
        self.bounds = bounds
    }

    /// Bytes received and not yet taken as part of a reply.
    public var bufferedBytes: Int { buffer.count - position }

    /// Adds bytes received from the server.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position >= 4096 && position * 2 >= buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole reply, or nil until enough bytes have arrived. Throws when the bytes are not
    /// RESP or exceed the bounds; the reader is unusable afterwards.
    public mutating func next() throws(RESPProtocolError) -> RESPValue? {
        while true {
            var value: RESPValue
            switch try step() {
            case .incomplete: return nil
            case .opened: continue
            case .value(let read): value = read
            }
            // Hand the value to the aggregates it completes, innermost first.
            while true {
                guard !stack.isEmpty else { return value }
                stack[stack.count - 1].values.append(value)
                stack[stack.count - 1].remaining -= 1
                guard stack[stack.count - 1].remaining == 0 else { break }
                let done = stack.removeLast()
                guard let finished = Self.finish(done) else { break }
                value = finished
            }
        }
    }

    /// Reads one value or aggregate header at `position`, consuming it only when it is whole.
    private mutating func step() throws(RESPProtocolError) -> Step {
        guard let (type, line, after) = try readLine(from: position) else { return .incomplete }
        switch type {
        case UInt8(ascii: "+"):
            position = after
            return .value(.simpleString(text(line)))
        case UInt8(ascii: "-"):
            position = after
            return .value(.error(text(line)))
        case UInt8(ascii: ":"):
            let number = try integer(line)
            position = after
            return .value(.integer(number))
        case UInt8(ascii: "_"):
            guard line.isEmpty else { throw RESPProtocolError("a null carries no data") }
            position = after
            return .value(.null)
        case UInt8(ascii: "#"):
            guard line.count == 1, let flag = line.first, flag == UInt8(ascii: "t") || flag == UInt8(ascii: "f") else {
                throw RESPProtocolError("a boolean is t or f")
            }
            position = after
            return .value(.boolean(flag == UInt8(ascii: "t")))
        case UInt8(ascii: ","):
            guard let number = Double(text(line)) else { throw RESPProtocolError("not a double: \(text(line))") }
            position = after
            return .value(.double(number))
        case UInt8(ascii: "("):
            let signed = line.first == UInt8(ascii: "-") || line.first == UInt8(ascii: "+")
            let digits = signed ? line.dropFirst() : line
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw RESPProtocolError("not a big number: \(text(line))")
            }
            position = after
            return .value(.bigNumber(text(line)))
        case UInt8(ascii: "$"), UInt8(ascii: "!"), UInt8(ascii: "="):
            return try bulk(type, length: try integer(line), payloadAt: after)
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "%"), UInt8(ascii: "|"):
            return try open(type, count: try integer(line), after: after)
        default:
            throw RESPProtocolError("unknown type byte \(type)")
        }
    }

    /// A bulk string, bulk error or verbatim string of `length` bytes starting at `start`.
    private mutating func bulk(_ type: UInt8, length: Int64, payloadAt start: Int) throws(RESPProtocolError) -> Step {
        if length == -1 && type == UInt8(ascii: "$") {
            position = start
            return .value(.null)
        }
        guard length >= 0, length <= Int64(bounds.bulkBytes) else {
            throw RESPProtocolError("a bulk length of \(length) (at most \(bounds.bulkBytes))")
        }
        let count = Int(length)
        guard buffer.count - start >= count + 2 else { return .incomplete }
        guard buffer[start + count] == 13, buffer[start + count + 1] == 10 else {
            throw RESPProtocolError("a bulk string is not followed by CRLF")
        }
        let payload = Array(buffer[start..<(start + count)])
        position = start + count + 2
        switch type {
        case UInt8(ascii: "!"):
            return .value(.error(String(decoding: payload, as: UTF8.self)))
        case UInt8(ascii: "="):
            guard payload.count >= 4, payload[3] == UInt8(ascii: ":") else {
                throw RESPProtocolError("a verbatim string starts with a three-letter format and a colon")
            }
            return .value(
                .verbatim(
                    format: String(decoding: payload[0..<3], as: UTF8.self),
                    text: String(decoding: payload[4...], as: UTF8.self)))
        default:
            return .value(.bulkString(payload))
        }
    }

    /// Starts an aggregate of `count` elements (pairs for a map or attributes).
    private mutating func open(_ type: UInt8, count: Int64, after: Int) throws(RESPProtocolError) -> Step {
        if count == -1 && type == UInt8(ascii: "*") {
            position = after
            return .value(.null)
        }
        let kind: AggregateKind =
            switch type {
            case UInt8(ascii: "*"): .array
            case UInt8(ascii: "~"): .set
            case UInt8(ascii: ">"): .push
            case UInt8(ascii: "%"): .map
            default: .attribute
            }
        let perEntry: Int64 = kind == .map || kind == .attribute ? 2 : 1
        guard count >= 0, count <= Int64(bounds.elements) / perEntry else {
            throw RESPProtocolError("an aggregate of \(count) elements (at most \(bounds.elements))")
        }
        guard stack.count < bounds.depth else { throw RESPProtocolError("aggregates nested deeper than \(bounds.depth)") }
        position = after
        let partial = Partial(kind: kind, remaining: Int(count * perEntry))
        if partial.remaining == 0 {
            guard let empty = Self.finish(partial) else { return .opened }
            return .value(empty)
        }
        stack.append(partial)
        return .opened
    }

    /// The value a finished aggregate stands for; nil for attributes, which are dropped.
    private static func finish(_ partial: Partial) -> RESPValue? {
        switch partial.kind {
        case .array: return .array(partial.values)
        case .set: return .set(partial.values)
        case .push: return .push(partial.values)
        case .attribute: return nil
        case .map:
            var pairs: [RESPPair] = []
            pairs.reserveCapacity(partial.values.count / 2)
            var index = 0
            while index + 1 < partial.values.count {
                pairs.append(RESPPair(partial.values[index], partial.values[index + 1]))
                index += 2
            }
            return .map(pairs)
        }
    }

    /// The type byte, the line after it (without CRLF) and the index after the CRLF; nil when the
    /// line has not fully arrived.
    private func readLine(from start: Int) throws(RESPProtocolError) -> (UInt8, ArraySlice<UInt8>, Int)? {
        guard start < buffer.count else { return nil }
        // A CR at `end - 1` ends a line of exactly `lineBytes` bytes.
        let end = start + 2 + bounds.lineBytes
        var index = start + 1
        while index < min(buffer.count, end) {
            if buffer[index] == 13 {
                guard index + 1 < buffer.count else { return nil }
                guard buffer[index + 1] == 10 else { throw RESPProtocolError("a CR not followed by LF") }
                return (buffer[start], buffer[(start + 1)..<index], index + 2)
            }
            index += 1
        }
        guard buffer.count < end else { throw RESPProtocolError("a line longer than \(bounds.lineBytes) bytes") }
        return nil
    }

    private func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A signed decimal integer, strictly: digits only after an optional sign, no overflow.
    private func integer(_ bytes: ArraySlice<UInt8>) throws(RESPProtocolError) -> Int64 {
        var digits = bytes[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 19 else { throw RESPProtocolError("not an integer: \(text(bytes))") }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else {
                throw RESPProtocolError("not an integer: \(text(bytes))")
            }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { throw RESPProtocolError("an integer out of range: \(text(bytes))") }
            value = sum
        }
        return negative ? -value : value
    }
}
