/// A parsed HTTP/1.1 request or response head: the start line split on spaces and the headers.
public struct HTTPHead: Sendable, Equatable {
    /// The three parts of the start line (method, target, version / version, status, reason).
    public let startLine: [String]
    /// Headers in order, names lowercased, values trimmed.
    public let headers: [(name: String, value: String)]

    /// Parses a head (as returned by `HTTPHeadReader`); nil when it is not well formed.
    public init?(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { return nil }
        let parts = first.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        startLine = parts.map(String.init)
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon]
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { return nil }
            let value = line[line.index(after: colon)...].trimmingHTTPWhitespace()
            headers.append((name.lowercased(), value))
        }
        self.headers = headers
    }

    /// The value of header `name` (any case); repeated headers are joined with ", ".
    public func header(_ name: String) -> String? {
        let key = name.lowercased()
        let values = headers.filter { $0.name == key }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The comma-separated tokens of header `name`, trimmed and lowercased.
    public func tokens(_ name: String) -> [String] {
        (header(name) ?? "").split(separator: ",").map { $0.trimmingHTTPWhitespace().lowercased() }
    }

    /// All headers as a dictionary, name lowercased, repeated values joined with ", ".
    public var headerDictionary: [String: String] { headerDictionary(excluding: []) }

    /// The headers not named in `excluded` (lowercased names) as a dictionary, name lowercased,
    /// repeated values joined with ", ".
    public func headerDictionary(excluding excluded: Set<String>) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers where !excluded.contains(name) {
            result[name] = result[name].map { "\($0), \(value)" } ?? value
        }
        return result
    }

    /// The headers of the WebSocket upgrade itself, which mean nothing once the connection is
    /// open; a connection does not keep them (about half a kilobyte each).
    public static let handshakeHeaders: Set<String> = [
        "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
        "sec-websocket-extensions", "sec-websocket-accept",
    ]

    public static func == (lhs: HTTPHead, rhs: HTTPHead) -> Bool {
        lhs.startLine == rhs.startLine && lhs.headers.elementsEqual(rhs.headers, by: ==)
    }
}

extension Substring {
    func trimmingHTTPWhitespace() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
