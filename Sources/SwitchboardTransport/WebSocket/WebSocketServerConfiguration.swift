import SwitchboardCryptography

extension WebSocketServer {
    /// Where a server listens and the limits it enforces on every connection.
    public struct Configuration: Sendable {
        /// Address to bind.
        public var host: String
        /// Port to bind; 0 picks a free port (returned by `start()`).
        public var port: Int
        /// The subprotocol the server speaks (for example "switchboard.v1").
        public var subprotocol: String?
        /// Refuse (HTTP 400) clients that do not offer `subprotocol`.
        public var requireSubprotocol: Bool
        /// Largest handshake request head; larger ones get 431 and are closed.
        public var maxHandshakeBytes: Int
        /// Largest inbound message; larger ones close the connection with 1009.
        public var maxMessageBytes: Int
        /// Most outbound bytes waiting per connection before it is closed with 1008.
        public var maxOutboundBytes: Int
        /// Time a client has to complete the handshake.
        public var handshakeTimeout: Duration
        /// Time the peer has to finish the closing handshake before the socket is closed.
        public var closingTimeout: Duration
        /// Serve `wss://` with this server context; nil serves plain `ws://`.
        public var tls: TLSContext?
        /// Browser origins allowed to connect (HTTP 403 for others); nil allows any. Requests
        /// without an `Origin` header (clients that are not browsers) are allowed.
        public var allowedOrigins: Set<String>? = nil
        /// Most sockets (handshaking or open) from one IP address; more are closed on accept.
        /// nil for no cap.
        public var maxConnectionsPerAddress: Int? = nil
        /// IP addresses the per-address cap does not apply to: loopback by default, the address
        /// of a local reverse proxy or load generator.
        public var connectionCapExemptAddresses: Set<String> = ["127.0.0.1", "::1", "::ffff:127.0.0.1"]
        /// Most frames (data, continuation and control) a peer may send per second, with a burst of
        /// as many; a faster peer is closed with 1008 "too many frames". nil for no cap.
        public var maxFramesPerSecond: Int? = nil
        /// Whether each open connection keeps its handshake's request headers
        /// (`WebSocketConnection.requestHeaders`); a handler that never reads them saves their
        /// memory (empty then).
        public var keepsRequestHeaders = true
        /// Told about every socket refused or closed by policy (cap, origin, malformed or slow
        /// handshake, frame rate, slow consumer), with the peer's "ip:port" and the reason. Runs on a
        /// loop thread.
        public var onRefusal: (@Sendable (_ remoteAddress: String, _ reason: String) -> Void)? = nil

        /// A configuration with the defaults for every limit.
        public init(
            host: String = "127.0.0.1", port: Int = 0, subprotocol: String? = nil,
            requireSubprotocol: Bool = true, maxHandshakeBytes: Int = 8192,
            maxMessageBytes: Int = 64 * 1024 + 1024, maxOutboundBytes: Int = 4 * 1024 * 1024,
            handshakeTimeout: Duration = .seconds(10), closingTimeout: Duration = .seconds(2),
            tls: TLSContext? = nil
        ) {
            self.host = host
            self.port = port
            self.subprotocol = subprotocol
            self.requireSubprotocol = requireSubprotocol
            self.maxHandshakeBytes = maxHandshakeBytes
            self.maxMessageBytes = maxMessageBytes
            self.maxOutboundBytes = maxOutboundBytes
            self.handshakeTimeout = handshakeTimeout
            self.closingTimeout = closingTimeout
            self.tls = tls
        }
    }
}
