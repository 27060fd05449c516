import Dispatch
import Foundation
import SwitchboardCluster
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardRedis
import SwitchboardServer

/// `switchboard serve`: runs a server until SIGINT or SIGTERM.
enum ServeCommand {
    static let usage = """
        switchboard serve [options]
          --listen HOST:PORT        where to listen (SWITCHBOARD_LISTEN, default 127.0.0.1:9100)
          --data-dir DIR            persistent data (SWITCHBOARD_DATA_DIR, default ./switchboard-data)
          --storage-key-file FILE   seal metadata values at rest with AES-256-GCM under the key in FILE
                                    (64 hex digits or 32 bytes); the same key is needed at every start
                                    (SWITCHBOARD_STORAGE_KEY_FILE)
          --app-id ID               serve only this app id; repeatable (SWITCHBOARD_APP_ID, comma-separated)
          --app-certificate CERT    require tokens signed with this certificate, paired with --app-id
                                    in order (SWITCHBOARD_APP_CERTIFICATE, comma-separated)
          --tls-cert FILE           serve wss:// with this PEM certificate chain (SWITCHBOARD_TLS_CERT)
          --tls-key FILE            the certificate's PEM private key (SWITCHBOARD_TLS_KEY)
          --admin-listen HOST:PORT  the admin listener: /health/live, /health/ready, /metrics
                                    (SWITCHBOARD_ADMIN_LISTEN, default 127.0.0.1:9101; "off" for none)
          --admin-tls               serve the admin listener over HTTPS with --tls-cert and --tls-key
                                    (SWITCHBOARD_ADMIN_TLS=1)
          --api-key-file FILE       open the server API (POST /api/<method> on the admin listener) to the
                                    keys in FILE, one a line; read again on SIGHUP
                                    (SWITCHBOARD_API_KEY_FILE)
          --shutdown-drain SECONDS  on SIGTERM, report not ready for SECONDS before closing connections
                                    (SWITCHBOARD_SHUTDOWN_DRAIN, default 0)
          --cluster URL             cluster mode: share this Redis (redis://[user:password@]HOST:PORT[/DB],
                                    rediss:// for TLS) with the other nodes; metadata lives there
                                    (SWITCHBOARD_CLUSTER)
          --node-id NAME            this node's name in the cluster, unique and the same across its
                                    restarts (SWITCHBOARD_NODE_ID, default: the host's name and a
                                    random suffix)
          --log-level LEVEL         debug, info, warning, error or none (SWITCHBOARD_LOG_LEVEL, default info)
          --no-rate-limits          lift the per-client rate limits and the frame cap, for load
                                    tests only (SWITCHBOARD_NO_RATE_LIMITS=1)
          --allowed-origin ORIGIN   let web pages from ORIGIN (e.g. https://app.example) connect; repeatable;
                                    when given, other origins get HTTP 403, clients without an Origin
                                    header are still let in (SWITCHBOARD_ALLOWED_ORIGIN, comma-separated)
          --max-connections-per-address N
                                    connections per client IP, loopback exempt; 0 for no cap
                                    (SWITCHBOARD_MAX_CONNECTIONS_PER_ADDRESS, default 1000)
          --max-frames-per-second N frames per second per connection before it is closed with 1008;
                                    0 for no cap (SWITCHBOARD_MAX_FRAMES_PER_SECOND, default 200)
          --login-timeout SECONDS   close connections not logged in after SECONDS; 0 for never
                                    (SWITCHBOARD_LOGIN_TIMEOUT, default 10)
        """

    static func run(_ arguments: [String]) async throws {
        let options = try CommandLineOptions(
            arguments, flagNames: ["no-rate-limits", "admin-tls", "help"], environment: ProcessInfo.processInfo.environment)
        if options.givenNames.contains("help") {
            print(usage)
            return
        }
        var configuration = ServerConfiguration()
        (configuration.host, configuration.port) = try hostAndPort(
            options.value("listen", env: "SWITCHBOARD_LISTEN") ?? "127.0.0.1:9100")
        configuration.dataDirectory = options.value("data-dir", env: "SWITCHBOARD_DATA_DIR") ?? "./switchboard-data"
        let certificate = options.value("tls-cert", env: "SWITCHBOARD_TLS_CERT")
        let key = options.value("tls-key", env: "SWITCHBOARD_TLS_KEY")
        switch (certificate, key) {
        case (let certificate?, let key?):
            // Loaded once here so that an unusable file stops the command before it starts.
            _ = try TLSContext.server(certificateFile: certificate, privateKeyFile: key)
            configuration.tls = ServerTLS(certificatePath: certificate, keyPath: key)
        case (nil, nil): break
        default: throw UsageError("--tls-cert and --tls-key go together")
        }
        let levelName = options.value("log-level", env: "SWITCHBOARD_LOG_LEVEL") ?? "info"
        guard let level = ServerLog.Level(name: levelName) else { throw UsageError("unknown log level '\(levelName)'") }
        configuration.log = ServerLog(level: level)
        if options.flag("no-rate-limits", env: "SWITCHBOARD_NO_RATE_LIMITS") {
            configuration.limits = .withoutRateLimits
            configuration.maxFramesPerSecond = nil
        }
        try applyAdmissionOptions(options, to: &configuration)
        try applyAdminOptions(options, to: &configuration)
        try applyClusterOptions(options, to: &configuration)
        let appIds = options.list("app-id", env: "SWITCHBOARD_APP_ID")
        let certificates = options.list("app-certificate", env: "SWITCHBOARD_APP_CERTIFICATE")
        guard certificates.isEmpty || certificates.count == appIds.count else {
            throw UsageError("give one --app-certificate per --app-id")
        }
        if !appIds.isEmpty { configuration.appIds = Set(appIds) }
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)

        let storageKey = try options.value("storage-key-file", env: "SWITCHBOARD_STORAGE_KEY_FILE").map {
            try StorageKey(contentsOfFile: $0)
        }

        let credentials = Dictionary(zip(appIds, certificates), uniquingKeysWith: { _, last in last })
        let server = SwitchboardServer(configuration: configuration) { modules in
            if !credentials.isEmpty { modules.extensions.append(Crypto(credentials: credentials)) }
            if let storageKey { modules.extensions.append(AtRestSealing(key: storageKey)) }
        }
        try await server.start()
        FileHandle.standardOutput.write(Data((server.url + "\n").utf8))
        let stop = AsyncStream<Void>.makeStream()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { stop.continuation.yield() }
        let reloads = SignalWatcher(signals: [SIGHUP]) {
            do {
                try server.reloadAPIKeys()
            } catch {
                server.configuration.log(.error, "\(error); the API keys in force stay")
            }
        }
        for await _ in stop.stream { break }
        signals.stop()
        reloads.stop()
        await server.shutdown()
    }
}

extension ServeCommand {
    /// Reads the options that decide who may connect and how fast they may send.
    static func applyAdmissionOptions(
        _ options: CommandLineOptions, to configuration: inout ServerConfiguration
    ) throws {
        let origins = options.list("allowed-origin", env: "SWITCHBOARD_ALLOWED_ORIGIN")
        if !origins.isEmpty { configuration.allowedOrigins = Set(origins) }
        if let cap = try count(options, "max-connections-per-address", env: "SWITCHBOARD_MAX_CONNECTIONS_PER_ADDRESS") {
            configuration.maxConnectionsPerAddress = cap == 0 ? nil : cap
        }
        if let cap = try count(options, "max-frames-per-second", env: "SWITCHBOARD_MAX_FRAMES_PER_SECOND") {
            configuration.maxFramesPerSecond = cap == 0 ? nil : cap
        }
        if let seconds = try count(options, "login-timeout", env: "SWITCHBOARD_LOGIN_TIMEOUT") {
            configuration.loginTimeout = seconds == 0 ? nil : .seconds(seconds)
        }
    }

    /// Reads the admin listener's options and the shutdown drain.
    static func applyAdminOptions(_ options: CommandLineOptions, to configuration: inout ServerConfiguration) throws {
        let listen = options.value("admin-listen", env: "SWITCHBOARD_ADMIN_LISTEN") ?? "127.0.0.1:9101"
        let tls = options.flag("admin-tls", env: "SWITCHBOARD_ADMIN_TLS")
        if listen == "off" {
            configuration.adminListener = nil
        } else {
            let (host, port) = try hostAndPort(listen, option: "admin-listen")
            configuration.adminListener = AdminListener(host: host, port: port, tls: tls)
        }
        if tls && configuration.tls == nil { throw UsageError("--admin-tls needs --tls-cert and --tls-key") }
        if let seconds = try count(options, "shutdown-drain", env: "SWITCHBOARD_SHUTDOWN_DRAIN") {
            configuration.shutdownDrain = .seconds(seconds)
        }
        if let keyFile = options.value("api-key-file", env: "SWITCHBOARD_API_KEY_FILE") {
            guard configuration.adminListener != nil else { throw UsageError("--api-key-file needs the admin listener") }
            configuration.serverAPI = ServerAPISettings(keys: .file(keyFile))
        }
    }

    /// Reads `--cluster` and `--node-id`.
    static func applyClusterOptions(_ options: CommandLineOptions, to configuration: inout ServerConfiguration) throws {
        let nodeID = options.value("node-id", env: "SWITCHBOARD_NODE_ID")
        guard let text = options.value("cluster", env: "SWITCHBOARD_CLUSTER") else {
            if nodeID != nil { throw UsageError("--node-id needs --cluster") }
            return
        }
        guard let url = RedisURL(text) else {
            throw UsageError("--cluster takes redis://[user:password@]HOST:PORT[/DB] or rediss://…, not '\(text)'")
        }
        if let nodeID, nodeID.isEmpty || nodeID.utf8.count > 64 {
            throw UsageError("--node-id takes a name of 1 to 64 bytes")
        }
        configuration.cluster = ClusterConfiguration(url: url, nodeID: nodeID)
    }

    private static func count(_ options: CommandLineOptions, _ name: String, env: String) throws -> Int? {
        guard let text = options.value(name, env: env) else { return nil }
        guard let value = Int(text), value >= 0 else { throw UsageError("--\(name) takes a number, not '\(text)'") }
        return value
    }

    /// Splits a `--listen` value into host and port.
    static func hostAndPort(_ listen: String, option: String = "listen") throws -> (String, Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw UsageError("--\(option) takes HOST:PORT, not '\(listen)'") }
        return (String(listen[..<colon]), port)
    }
}

/// Calls `action` when one of `signals` arrives (instead of the default: dying).
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], action: @escaping @Sendable () -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            return source
        }
    }

    func stop() { for source in sources { source.cancel() } }
}
