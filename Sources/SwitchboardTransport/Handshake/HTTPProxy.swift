import Foundation

/// An HTTP proxy a client reaches its server through: it opens a tunnel with `CONNECT`
/// (RFC 9110 section 9.3.6), then speaks WebSocket (or TLS) inside it as if connected directly.
public struct HTTPProxy: Sendable, Equatable {
    /// The proxy's host name or address.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The account for `Proxy-Authorization: Basic`; nil sends no credentials.
    public var username: String?
    /// The password that goes with `username`.
    public var password: String

    /// A proxy at `host:port`, with credentials when `username` is given.
    public init(host: String, port: Int, username: String? = nil, password: String = "") {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// The `CONNECT` request for a tunnel to `host:port`.
    public func connectRequest(toHost host: String, port: Int) -> [UInt8] {
        let authority = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let username {
            let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
            request += "Proxy-Authorization: Basic \(credentials)\r\n"
        }
        return Array((request + "\r\n").utf8)
    }

    /// Throws `.proxyFailed` unless `head` is a 2xx answer to `CONNECT`, which opens the tunnel.
    public static func checkConnectResponse(_ head: [UInt8]) throws(WebSocketClientError) {
        guard let response = HTTPHead(head), response.startLine[0].hasPrefix("HTTP/1."),
            let status = Int(response.startLine[1])
        else { throw .proxyFailed("the proxy's answer is not HTTP") }
        guard (200..<300).contains(status) else {
            throw .proxyFailed("the proxy refused the tunnel: \(status) \(response.startLine[2])")
        }
    }
}
