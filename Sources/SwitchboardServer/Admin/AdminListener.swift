/// Where a server's admin listener (health, metrics) listens: plain HTTP, or HTTPS with the
/// client port's certificate.
public struct AdminListener: Sendable, Equatable {
    /// The address to listen on; loopback by default, so only the host itself reaches it.
    public var host: String
    /// The port to listen on; 0 picks a free one.
    public var port: Int
    /// Serve HTTPS with `ServerConfiguration.tls` (which must then be set).
    public var tls: Bool

    /// An admin listener on `host:port`.
    public init(host: String = "127.0.0.1", port: Int = 9101, tls: Bool = false) {
        self.host = host
        self.port = port
        self.tls = tls
    }
}
