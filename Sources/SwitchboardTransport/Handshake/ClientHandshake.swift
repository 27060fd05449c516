import SwitchboardCryptography

/// The client side of the opening handshake: the request to send and the check of the answer.
public struct ClientHandshake: Sendable {
    /// The `Host` header value.
    public let host: String
    /// The request target (path and query).
    public let path: String
    /// Subprotocols offered, in order of preference.
    public let subprotocols: [String]
    /// Extra request headers (for example `Origin` or `Authorization`).
    public let extraHeaders: [(String, String)]
    /// The random `Sec-WebSocket-Key`.
    public let key: String

    /// A handshake with a fresh random key.
    public init(
        host: String, path: String, subprotocols: [String] = [],
        extraHeaders: [(String, String)] = [], key: String = WebSocketAccept.randomKey()
    ) {
        self.host = host
        self.path = path
        self.subprotocols = subprotocols
        self.extraHeaders = extraHeaders
        self.key = key
    }

    /// The upgrade request bytes.
    public var request: [UInt8] {
        var text = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\n"
        text += "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if !subprotocols.isEmpty {
            text += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n"
        }
        for (name, value) in extraHeaders { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// Checks the server's response head; returns the chosen subprotocol.
    public func validate(response bytes: [UInt8]) throws(WebSocketClientError) -> String? {
        guard let head = HTTPHead(bytes), head.startLine[0] == "HTTP/1.1" else {
            throw .handshakeFailed("malformed response")
        }
        guard head.startLine[1] == "101" else {
            throw .handshakeFailed("status \(head.startLine[1]) \(head.startLine[2])")
        }
        guard head.tokens("upgrade").contains("websocket"),
            head.tokens("connection").contains("upgrade")
        else { throw .handshakeFailed("missing upgrade headers") }
        guard head.header("sec-websocket-accept") == WebSocketAccept.value(forKey: key) else {
            throw .handshakeFailed("wrong Sec-WebSocket-Accept")
        }
        guard head.header("sec-websocket-extensions") == nil else {
            throw .handshakeFailed("unrequested extension")
        }
        guard let chosen = head.header("sec-websocket-protocol") else { return nil }
        guard subprotocols.contains(chosen) else {
            throw .handshakeFailed("server chose unoffered subprotocol \(chosen)")
        }
        return chosen
    }
}

/// Why a client connection could not be opened.
public enum WebSocketClientError: Error, Equatable, Sendable {
    /// The URL is not `ws://host[:port][/path]` or `wss://…`.
    case invalidURL(String)
    /// The host name did not resolve.
    case resolutionFailed(String)
    /// The TCP connection failed with this errno.
    case connectFailed(Int32)
    /// Connecting and the handshake did not finish in time.
    case timedOut
    /// The server's answer was not a valid upgrade.
    case handshakeFailed(String)
    /// The connection closed before the handshake finished.
    case closedDuringHandshake
    /// The TLS handshake failed (for a `wss://` URL): the server's certificate was not trusted
    /// or not for this host, or the two sides could not agree.
    case tlsFailed(TLSError)
    /// The HTTP proxy did not open a tunnel: it refused (407 without the right credentials, say),
    /// answered something else than HTTP, or closed the connection.
    case proxyFailed(String)
    /// The event loop group was shut down.
    case shutDown
    /// The connecting task was cancelled.
    case cancelled
}
