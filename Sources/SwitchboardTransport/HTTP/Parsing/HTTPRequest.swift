/// One HTTP/1.1 request as `HTTPRequestParser` reads it: start line, headers and body.
public struct HTTPRequest: Sendable, Equatable {
    /// The method, as sent (methods are case-sensitive).
    public let method: String
    /// The request target (origin form: path and query).
    public let target: String
    /// "HTTP/1.1" or "HTTP/1.0".
    public let version: String
    /// The head's headers, names lowercased, values trimmed.
    public let head: HTTPHead
    /// The body (Content-Length bytes; empty without one).
    public let body: [UInt8]
    /// The peer's "ip:port", set by the connection that read the request (empty elsewhere).
    public var remoteAddress = ""

    /// The target's path, without the query.
    public var path: Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }

    /// The target's query, after "?", if any.
    public var query: Substring? {
        target.firstIndex(of: "?").map { target[target.index(after: $0)...] }
    }

    /// The value of header `name` (any case); repeated headers are joined with ", ".
    public func header(_ name: String) -> String? { head.header(name) }

    /// Whether the client lets the connection serve another request after this one: HTTP/1.1
    /// unless it sent `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    public var keepsAlive: Bool {
        let tokens = head.tokens("connection")
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }

    /// A request made of its parts (for tests and in-process callers).
    public init(method: String, target: String, version: String = "HTTP/1.1", head: HTTPHead, body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.version = version
        self.head = head
        self.body = body
    }
}
