/// An HTTP/1.1 response a responder gives: status, headers and body. The server adds
/// Content-Length and Connection.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Headers besides Content-Length and Connection, in order.
    public var headers: [HTTPHeaderField]
    /// The body.
    public var body: [UInt8]

    /// A response with `status`, `headers` and `body`.
    public init(status: Int, headers: [HTTPHeaderField] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response (UTF-8).
    public static func text(_ status: Int, _ text: String, headers: [HTTPHeaderField] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [HTTPHeaderField("Content-Type", "text/plain; charset=utf-8")] + headers,
            body: Array(text.utf8))
    }

    /// A JSON response; `json` is already encoded.
    public static func json(_ status: Int, _ json: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeaderField("Content-Type", "application/json")], body: Array(json.utf8))
    }

    /// The response on the wire: status line, headers, Content-Length, Connection, then the body
    /// unless `includingBody` is false (the answer to HEAD).
    public func encoded(keepAlive: Bool, includingBody: Bool = true) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        var bytes = Array(head.utf8)
        if includingBody { bytes += body }
        return bytes
    }
}

/// One header of a response.
public struct HTTPHeaderField: Sendable, Equatable {
    /// The name, as sent.
    public var name: String
    /// The value.
    public var value: String

    /// A header `name: value`.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
