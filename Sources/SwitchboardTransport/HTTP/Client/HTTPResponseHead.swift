/// The head of an HTTP/1.x response: the status and the header fields.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The status code (100–999).
    public var status: Int
    /// The header fields, in order, names as sent.
    public var headers: [HTTPHeaderField]

    /// Creates a head.
    public init(status: Int, headers: [HTTPHeaderField]) {
        self.status = status
        self.headers = headers
    }
}

/// Reads a response head from bytes as they arrive, pure: a client feeds what it receives and
/// learns when the head is complete, or that what came is not an HTTP/1.x response. Bounded: a
/// head longer than `maxHeadBytes` is refused, without waiting for its end.
public struct HTTPResponseHeadParser: Sendable {
    /// What reading the bytes so far gave.
    public enum Progress: Sendable, Equatable {
        /// The head is not complete yet.
        case needMore
        /// The head, complete.
        case head(HTTPResponseHead)
        /// Not an HTTP/1.x response head.
        case invalid(String)
    }

    /// The longest head accepted.
    public let maxHeadBytes: Int
    private var buffer: [UInt8] = []
    private var end = HeadEnd()

    /// A parser for heads up to `maxHeadBytes`.
    public init(maxHeadBytes: Int = 16 * 1024) { self.maxHeadBytes = maxHeadBytes }

    /// Adds received bytes; after `.head` or `.invalid` it answers the same again.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> Progress {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 5, !buffer.starts(with: Array("HTTP/".utf8)) { return .invalid("the answer is not HTTP") }
        if buffer.count < 5, !Array("HTTP/".utf8).starts(with: buffer) { return .invalid("the answer is not HTTP") }
        guard let length = end.find(in: buffer) else {
            return buffer.count > maxHeadBytes ? .invalid("the response head is longer than \(maxHeadBytes) bytes") : .needMore
        }
        guard length <= maxHeadBytes else { return .invalid("the response head is longer than \(maxHeadBytes) bytes") }
        return Self.parse(buffer[..<(length - 4)])
    }

    private static func parse(_ head: ArraySlice<UInt8>) -> Progress {
        guard let text = String(validating: head, as: UTF8.self) else { return .invalid("the response head is not UTF-8") }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].count == 3,
            let status = Int(parts[1]), (100...999).contains(status)
        else { return .invalid("bad status line '\(statusLine.prefix(80))'") }
        var headers: [HTTPHeaderField] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" })
            else { return .invalid("bad header line '\(line.prefix(80))'") }
            let value = line[line.index(after: colon)...].trimmingPrefix { $0 == " " || $0 == "\t" }
            headers.append(HTTPHeaderField(String(line[..<colon]), String(value)))
        }
        return .head(HTTPResponseHead(status: status, headers: headers))
    }
}
