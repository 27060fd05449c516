import SwitchboardCryptography

/// How a Redis client or subscriber connects and how long it waits.
public struct RedisConfiguration: Sendable {
    /// The server and the login.
    public var url: RedisURL
    /// How long a call waits for its reply before it fails with `.timedOut` (and the connection
    /// is closed and made again).
    public var commandTimeout: Duration
    /// How long connecting may take, and then each step of the login (`HELLO`, `AUTH`, `SELECT`).
    public var connectTimeout: Duration
    /// The waits between reconnection attempts.
    public var backoff: RedisBackoff
    /// The TLS context of a `rediss://` URL: a client context; the system's trusted roots when nil.
    public var tls: TLSContext?
    /// The certificate name a `rediss://` server must present; the URL's host when nil.
    public var tlsServerName: String?
    /// Ask for RESP3 with `HELLO 3` (falling back to RESP2 on a server without it).
    public var preferRESP3: Bool
    /// How often a subscriber checks its link with `PING` (a dead link is found within this plus
    /// `commandTimeout`).
    public var healthCheckInterval: Duration
    /// The largest replies accepted.
    public var readerBounds: RESPReader.Bounds

    /// A configuration for `url` with the defaults: 5 s per call and for connecting, RESP3
    /// preferred, a link check every second.
    public init(
        url: RedisURL, commandTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(5),
        backoff: RedisBackoff = RedisBackoff(), tls: TLSContext? = nil, tlsServerName: String? = nil,
        preferRESP3: Bool = true, healthCheckInterval: Duration = .seconds(1),
        readerBounds: RESPReader.Bounds = RESPReader.Bounds()
    ) {
        self.url = url
        self.commandTimeout = commandTimeout
        self.connectTimeout = connectTimeout
        self.backoff = backoff
        self.tls = tls
        self.tlsServerName = tlsServerName
        self.preferRESP3 = preferRESP3
        self.healthCheckInterval = healthCheckInterval
        self.readerBounds = readerBounds
    }
}
