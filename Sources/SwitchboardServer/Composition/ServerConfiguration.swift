import SwitchboardCore

/// How a server listens and which limits it enforces.
public struct ServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port to listen on; 0 picks a free one.
    public var port: Int = 9100
    /// Serve `wss://` with this certificate and key; nil serves plain `ws://`.
    public var tls: ServerTLS?
    /// Where persistent data lives.
    public var dataDirectory: String = "./switchboard-data"
    /// The app ids served; nil serves any (development).
    public var appIds: Set<String>?
    /// The limits enforced on every client.
    public var limits: Limits = Limits()
    /// The clock every timeout runs on.
    public var clock: any SwitchboardClock = SystemClock()
    /// Event-loop threads; nil means one per core.
    public var eventLoopThreads: Int?
    /// Bytes queued to one connection before it counts as a slow consumer and is closed.
    public var maxOutboundBytesPerConnection: Int = 4 * 1024 * 1024
    /// The log.
    public var log: ServerLog = ServerLog(level: .info)

    /// The defaults: 127.0.0.1:9100, the reference's limits, any app id.
    public init() {}
}
