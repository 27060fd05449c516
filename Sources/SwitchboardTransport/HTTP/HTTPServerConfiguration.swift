import SwitchboardCryptography

extension HTTPServer {
    /// Where an HTTP server listens and the bounds it holds every connection to.
    public struct Configuration: Sendable {
        /// Address to bind.
        public var host: String
        /// Port to bind; 0 picks a free port (returned by `start()`).
        public var port: Int
        /// Serve HTTPS with this server context; nil serves plain HTTP.
        public var tls: TLSContext?
        /// Largest request head; a larger one gets 431 and the connection is closed.
        public var maxHeadBytes: Int = 8192
        /// Largest request body; a larger Content-Length gets 413 and the connection is closed.
        public var maxBodyBytes: Int = 64 * 1024
        /// Time a client has to send a whole request, from the connection's start or the last
        /// response; a slower (or idle keep-alive) connection is closed.
        public var requestTimeout: Duration = .seconds(10)
        /// Time a refused client has to read its error response before the socket is closed.
        public var closingTimeout: Duration = .seconds(2)
        /// Most connections open at once; more are closed on accept.
        public var maxConnections: Int = 256
        /// Told about every connection refused or closed by policy (bad or slow request, too many
        /// connections), with the peer's "ip:port" and the reason. Runs on a loop thread.
        public var onRefusal: (@Sendable (_ remoteAddress: String, _ reason: String) -> Void)? = nil

        /// A configuration for `host:port` with the default bounds.
        public init(host: String = "127.0.0.1", port: Int = 0, tls: TLSContext? = nil) {
            self.host = host
            self.port = port
            self.tls = tls
        }
    }
}
