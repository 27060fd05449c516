import SwitchboardCluster
import SwitchboardCore
import SwitchboardWebhooks

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
    /// Where channel and user metadata live: SQLite under `dataDirectory`, or memory only.
    public var metadataStorage: MetadataStorage = .sqlite
    /// The app ids served; nil serves any (development).
    public var appIds: Set<String>?
    /// The limits enforced on every client of an app without its own.
    public var limits: Limits = Limits()
    /// The limits of the apps that have their own, whole (`limits` with the app's values over
    /// them), by app id; every other app gets `limits`.
    public var appLimits: [AppID: Limits] = [:]
    /// The clock every timeout runs on.
    public var clock: any SwitchboardClock = SystemClock()
    /// Event-loop threads; nil means one per processor the process may run on (its affinity mask).
    public var eventLoopThreads: Int?
    /// Bytes queued to one connection before it counts as a slow consumer and is closed.
    public var maxOutboundBytesPerConnection: Int = 4 * 1024 * 1024
    /// The log.
    public var log: ServerLog = ServerLog(level: .info)
    /// Time a connection has to log in; after it the connection is closed with 1008. nil waits
    /// forever.
    public var loginTimeout: Duration? = .seconds(10)
    /// Web page origins allowed to connect (`Origin` header, e.g. "https://app.example"); others
    /// get HTTP 403. nil allows any. Clients that send no Origin (not browsers) are allowed.
    public var allowedOrigins: Set<String>?
    /// Most connections from one IP address, handshakes included; nil for no cap.
    public var maxConnectionsPerAddress: Int? = 1_000
    /// Addresses the per-address cap does not apply to: loopback, so a local reverse proxy (all
    /// of whose clients share its address) and local load tests are not capped.
    public var connectionCapExemptAddresses: Set<String> = ["127.0.0.1", "::1", "::ffff:127.0.0.1"]
    /// Most WebSocket frames per second one connection may send (requests, heartbeats, pings and
    /// fragments alike), with a burst of as many; a faster client is closed with 1008. nil for
    /// no cap.
    public var maxFramesPerSecond: Int? = 200

    /// The admin listener (health, metrics); nil for none. Off for an embedded server unless
    /// set; `switchboard serve` listens on 127.0.0.1:9101 unless told otherwise.
    public var adminListener: AdminListener?
    /// The server API under `/api/` on the admin listener, opened by API keys; nil for none (its
    /// paths are then 404). `switchboard serve --api-key-file FILE` sets it.
    public var serverAPI: ServerAPISettings?
    /// How long shutdown reports not ready before it stops accepting and closes connections, so a
    /// load balancer probing `/health/ready` drains the node first.
    public var shutdownDrain: Duration = .zero
    /// Cluster mode: the Redis this node shares with the other nodes of its cluster, and its
    /// name; nil for one node on its own. In cluster mode metadata lives in that Redis, whatever
    /// `metadataStorage` says.
    public var cluster: ClusterConfiguration?
    /// Webhooks: receivers of every app and of single apps, the signing secret, the retry rules;
    /// nil (or no receiver) for none. Deliveries wait in `webhooks.sqlite` under `dataDirectory`
    /// unless `webhookQueue` is `.memory`.
    public var webhooks: WebhookConfiguration?
    /// Where webhook deliveries wait: SQLite under `dataDirectory` (durable), or memory only.
    public var webhookQueue: MetadataStorage = .sqlite

    /// The defaults: 127.0.0.1:9100, the reference's limits, any app id.
    public init() {}
}

/// Where a server keeps channel and user metadata.
public enum MetadataStorage: Sendable, Hashable {
    /// `metadata.sqlite` under the data directory: it survives restarts and crashes.
    case sqlite
    /// Memory only: gone when the server stops (tests, throwaway servers).
    case memory
}
