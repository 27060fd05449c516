/// The server side of the opening handshake as a pure function from request head to response.
public struct ServerHandshake: Sendable {
    /// The subprotocol the server speaks, if any.
    public var subprotocol: String?
    /// Refuse clients that do not offer `subprotocol` (otherwise accept them without one).
    public var requireSubprotocol: Bool
    /// Browser origins allowed to connect; nil allows any. See `OriginPolicy`.
    public var allowedOrigins: Set<String>?

    /// A handshake that accepts `subprotocol`, from the `allowedOrigins` (nil: any).
    public init(subprotocol: String?, requireSubprotocol: Bool = true, allowedOrigins: Set<String>? = nil) {
        self.subprotocol = subprotocol
        self.requireSubprotocol = requireSubprotocol
        self.allowedOrigins = allowedOrigins.map(OriginPolicy.normalized)
    }

    /// An accepted upgrade request.
    public struct Accepted: Sendable, Equatable {
        /// The 101 response to send.
        public let response: [UInt8]
        /// The negotiated subprotocol.
        public let subprotocol: String?
        /// The request target (path and query).
        public let path: String
        /// The request headers, names lowercased, without those the handshake itself consumed
        /// (`HTTPHead.handshakeHeaders`; the subprotocol it settled on is `subprotocol`).
        public let headers: [String: String]
    }

    /// A refused request.
    public struct Rejected: Error, Sendable, Equatable {
        /// The HTTP status sent back.
        public let status: Int
        /// Why the request was refused.
        public let reason: String
        /// The complete HTTP response to send.
        public let response: [UInt8]

        init(_ status: Int, _ reason: String, extraHeaders: [(String, String)] = []) {
            self.status = status
            self.reason = reason
            self.response = httpResponse(
                status: status, headers: extraHeaders + [("Connection", "close")], body: reason + "\n")
        }
    }

    /// Validates an upgrade request head and builds the response.
    public func respond(to bytes: [UInt8]) -> Result<Accepted, Rejected> {
        guard let head = HTTPHead(bytes) else { return .failure(Rejected(400, "malformed request")) }
        return respond(to: head)
    }

    /// Validates a parsed upgrade request and builds the response.
    public func respond(to head: HTTPHead) -> Result<Accepted, Rejected> {
        guard head.startLine[0] == "GET" else { return .failure(Rejected(405, "method must be GET")) }
        guard head.startLine[2] == "HTTP/1.1" else {
            return .failure(Rejected(400, "HTTP/1.1 required"))
        }
        guard head.tokens("upgrade").contains("websocket") else {
            return .failure(Rejected(400, "missing Upgrade: websocket"))
        }
        guard head.tokens("connection").contains("upgrade") else {
            return .failure(Rejected(400, "missing Connection: upgrade"))
        }
        guard head.header("sec-websocket-version") == "13" else {
            return .failure(
                Rejected(426, "unsupported WebSocket version", extraHeaders: [("Sec-WebSocket-Version", "13")]))
        }
        guard let key = head.header("sec-websocket-key"), WebSocketAccept.isValidKey(key) else {
            return .failure(Rejected(400, "missing or invalid Sec-WebSocket-Key"))
        }
        guard OriginPolicy.allows(head.header("origin"), allowed: allowedOrigins) else {
            return .failure(Rejected(403, "origin not allowed"))
        }
        var chosen: String?
        if let subprotocol {
            let offered = (head.header("sec-websocket-protocol") ?? "").split(separator: ",")
                .map { $0.trimmingHTTPWhitespace() }
            if offered.contains(subprotocol) {
                chosen = subprotocol
            } else if requireSubprotocol {
                return .failure(Rejected(400, "subprotocol \(subprotocol) required"))
            }
        }
        var headers = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", WebSocketAccept.value(forKey: key)),
        ]
        if let chosen { headers.append(("Sec-WebSocket-Protocol", chosen)) }
        return .success(
            Accepted(
                response: httpResponse(status: 101, headers: headers, body: nil),
                subprotocol: chosen, path: head.startLine[1],
                headers: head.headerDictionary(excluding: HTTPHead.handshakeHeaders)))
    }
}

/// Encodes a minimal HTTP/1.1 response.
func httpResponse(status: Int, headers: [(String, String)], body: String?) -> [UInt8] {
    var text = "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if let body {
        text += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        text += body
    } else {
        text += "\r\n"
    }
    return Array(text.utf8)
}
