import Foundation
import Synchronization
import SwitchboardCluster
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardTransport
import SwitchboardWire

/// A Switchboard server: the bus, the modules on it, and the WebSocket listener in front.
///
/// Build it with a configuration, optionally replace or add modules, `start()` it, and
/// `shutdown()` it (or `run()` it until the task is cancelled).
public final class SwitchboardServer: Sendable {
    /// The configuration it was built with.
    public let configuration: ServerConfiguration
    /// The bus every module talks through; embedders may subscribe to its events.
    public let bus: EventBus
    /// The modules, in start order.
    public let modules: [any Module]

    /// What decides `/health/ready`: the server's client port ("listener") and any check added
    /// (a cluster component adds "redis" and "pubsub").
    public let readiness = Readiness()
    /// The admin listener's routes: health, metrics, the server API and the admin page; an
    /// embedder may add its own.
    public let adminRouter = AdminRouter()

    private let registry: SessionRegistry<WebSocketConnection>
    private let hub: ConnectionHub<WebSocketConnection>
    /// The limits in force, the server's and each app's, and the apps served: every module and
    /// every connection reads them here, once per request; `replace(with:)` changes them for the
    /// requests after (`switchboard serve` on SIGHUP).
    public let limitsBook: LimitsBook
    private let refusals: RefusalLog
    private let metrics = ServerMetrics()
    private let clientPort = ClientPortReadiness()
    /// In cluster mode, the link to the other nodes (for readiness and metrics).
    private let clusterLink: ClusterLink?
    private let phase = Mutex(Phase.idle)

    private enum Phase {
        case idle
        case starting
        case running(Running)
        case stopped
    }

    /// What a running server holds: its client listener and loops, the admin listener with its
    /// own loop (so a scrape never waits behind client traffic, nor counts as it), the modules' runs.
    private struct Running {
        let port: Int
        let group: EventLoopGroup
        let listener: WebSocketServer
        let admin: (server: HTTPServer, group: EventLoopGroup)?
        /// The server API, when configured.
        let api: ServerAPI?
        let modules: Task<Void, Never>
    }

    /// Builds a server; `customize` may replace built-in modules or add extensions.
    public init(
        configuration: ServerConfiguration = ServerConfiguration(),
        customize: (inout ServerModules) -> Void = { _ in }
    ) {
        self.configuration = configuration
        var modules = ServerModules(for: configuration)
        customize(&modules)
        self.modules = modules.all
        clusterLink = modules.cluster
        modules.cluster?.reap(with: modules.deadNodeSteps)
        bus = EventBus()
        registry = SessionRegistry(limits: configuration.limits, metrics: metrics)
        limitsBook = LimitsBook(
            LimitsBook.Edition(server: configuration.limits, apps: configuration.appLimits, served: configuration.appIds))
        let dispatcher = RequestDispatcher(
            bus: bus, registry: registry, clock: configuration.clock, limitsBook: limitsBook,
            log: configuration.log, metrics: metrics)
        refusals = RefusalLog(log: configuration.log, clock: configuration.clock, metrics: metrics)
        readiness.add(clientPort)
        if let connected = modules.clusterRedisConnected {
            readiness.add(
                ReadinessProbe("redis") {
                    connected() ? .ready : .notReady("the connections to the cluster's Redis are down")
                })
        }
        if let link = modules.cluster {
            let clock = configuration.clock
            readiness.add(
                ReadinessProbe("pubsub") {
                    link.pubSubProven(now: clock.now)
                        ? .ready
                        : .notReady("no probe came back through Redis pub/sub within \(link.configuration.probeWindow)")
                })
        }
        hub = ConnectionHub(
            registry: registry, dispatcher: dispatcher, log: configuration.log,
            clock: configuration.clock, loginTimeout: configuration.loginTimeout, refusals: refusals)
    }

    /// Starts every module, opens those that open something (`OpeningModule`), runs their
    /// `run()` in one task group, then listens. Returns the port it listens on. Throws `TLSError`
    /// when the TLS certificate or key cannot be used, and a module's error (the metadata
    /// database's `StorageStartupError`, naming the file) when it cannot open.
    @discardableResult
    public func start() async throws -> Int {
        let mayStart = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .starting
            return true
        }
        guard mayStart else { throw ServerError.alreadyStarted }
        let tls: TLSContext?
        do {
            tls = try configuration.tls.map { files throws(TLSError) in
                try TLSContext.server(certificateFile: files.certificatePath, privateKeyFile: files.keyPath)
            }
        } catch {
            phase.withLock { $0 = .idle }
            throw error
        }
        let context = ModuleContext(
            bus: bus, clock: configuration.clock, limitsBook: limitsBook, outbox: registry, log: configuration.log)
        for module in modules { await module.start(context.labeled(module.name)) }
        do {
            for case let module as any OpeningModule in modules { try await module.open() }
        } catch {
            bus.close()
            phase.withLock { $0 = .stopped }
            throw error
        }
        let runs = Task { [modules, log = configuration.log] in await Self.runModules(modules, log: log) }
        do {
            return try listen(tls: tls, modules: runs)
        } catch {
            runs.cancel()
            await runs.value
            bus.close()
            phase.withLock { $0 = .stopped }
            throw error
        }
    }

    /// Runs every module's `run()` as a child of one task group until the group is cancelled. A
    /// module whose `run()` fails is logged; the others go on.
    private static func runModules(_ modules: [any Module], log: ServerLog) async {
        await withDiscardingTaskGroup { group in
            for module in modules {
                group.addTask {
                    do {
                        try await module.run()
                    } catch is CancellationError {
                    } catch {
                        log(.error, "module \(module.name) stopped: \(error)")
                    }
                }
            }
        }
    }

    private func listen(tls: TLSContext?, modules: Task<Void, Never>) throws -> Int {
        let group = try EventLoopGroup(
            threads: configuration.eventLoopThreads ?? EventLoopGroup.threadsPerAvailableProcessor)
        let listener = WebSocketServer(
            configuration: configuration.transportConfiguration(
                subprotocol: Wire.subprotocol, refusals: refusals, tls: tls),
            group: group, handler: hub)
        let port: Int
        let admin: (server: HTTPServer, group: EventLoopGroup)?
        let api: ServerAPI?
        do {
            port = try listener.start()
            let url = "\(configuration.tls == nil ? "ws" : "wss")://\(configuration.host):\(port)"
            NodeStatusSource(
                nodeID: configuration.cluster?.nodeID, url: url, host: configuration.host, startedAt: configuration.clock.wallNow,
                readiness: readiness, registry: registry
            ).register(on: bus)
            api = try makeAPI(url: url)
            admin = try startAdmin(tls: tls, api: api)
        } catch {
            listener.stop()
            group.shutdown()
            throw error
        }
        phase.withLock {
            $0 = .running(Running(port: port, group: group, listener: listener, admin: admin, api: api, modules: modules))
        }
        clientPort.listening()
        configuration.log(.info, "switchboard listening on \(url)")
        if let admin, let adminPort = admin.server.port {
            configuration.log(.info, "admin listener on \(admin.server.configuration.tls == nil ? "http" : "https")://\(admin.server.configuration.host):\(adminPort)")
        }
        return port
    }

    /// Starts the admin listener when the configuration asks for one, on a loop of its own, with
    /// the server API's routes when it has one.
    private func startAdmin(tls: TLSContext?, api: ServerAPI?) throws -> (server: HTTPServer, group: EventLoopGroup)? {
        guard let settings = configuration.adminListener else { return nil }
        guard !settings.tls || tls != nil else { throw ServerError.adminTLSWithoutCertificate }
        // Weak: the router is the server's, and a strong reference back would keep both alive.
        adminRouter.addHealthAndMetrics(readiness: readiness) { [weak self] in await self?.metricsText() ?? "" }
        if let api { adminRouter.add("POST", ServerAPI.prefix, prefix: true) { request in await api.respond(to: request) } }
        adminRouter.addAdminPage()
        let group = try EventLoopGroup(threads: 1)
        var http = HTTPServer.Configuration(host: settings.host, port: settings.port, tls: settings.tls ? tls : nil)
        // A batch of calls with large messages needs more than a health probe's 64 KiB.
        if api != nil { http.maxBodyBytes = ServerAPI.maxBodyBytes }
        http.onRefusal = { [refusals] address, reason in refusals.refused(address, "admin: " + reason) }
        let server = HTTPServer(configuration: http, group: group, responder: adminRouter)
        do {
            try server.start()
        } catch {
            group.shutdown()
            throw error
        }
        return (server, group)
    }

    /// The server API when the configuration has one (its keys load now: a key file that cannot
    /// be read stops the start).
    private func makeAPI(url: String) throws -> ServerAPI? {
        guard let settings = configuration.serverAPI, configuration.adminListener != nil else { return nil }
        let keyring: APIKeyring
        do {
            keyring = try APIKeyring(settings.keys)
        } catch {
            throw ServerError.apiKeys(error.description)
        }
        let nodeID = configuration.cluster.map { [("nodeId", JSONValue.string($0.nodeID))] } ?? []
        let node: @Sendable () -> JSONValue = { [registry, host = configuration.host] in
            .object(
                nodeID + [
                    ("url", .string(url)), ("host", .string(host)), ("self", true), ("connections", .int(registry.connectionCount)),
                ])
        }
        let context = APIContext(
            bus: bus, limitsBook: limitsBook, clock: configuration.clock,
            startedAt: configuration.clock.now, node: node, counters: { [registry] in registry.nodeCounters },
            address: { [registry] session in registry.address(of: session) })
        return ServerAPI(
            keyring: keyring, context: context,
            rate: settings.callsPerSecondPerKey.map { APIRateLimiter(callsPerSecond: $0, clock: configuration.clock) },
            metrics: metrics, refusals: refusals, ready: { [clientPort] in await clientPort.check() == .ready })
    }

    /// Reads the server API's keys again (the key file, for `APIKeySource.file`); on failure the
    /// keys in force stay and the error says why. Does nothing without a server API.
    public func reloadAPIKeys() throws {
        let api = phase.withLock { phase -> ServerAPI? in if case .running(let running) = phase { running.api } else { nil } }
        do {
            try api?.keyring.reload()
        } catch {
            throw ServerError.apiKeys(error.description)
        }
        if let api { configuration.log(.info, "api: \(api.keyring.count) API keys in force") }
    }

    /// Puts `limits` in force for every app without its own, keeping the apps' own and the apps
    /// served, from each connection's and module's next request on.
    public func updateLimits(_ limits: Limits) {
        limitsBook.replaceServerLimits(with: limits)
    }

    /// The port it listens on, once started.
    public var port: Int? {
        phase.withLock { if case .running(let running) = $0 { running.port } else { nil } }
    }

    /// The admin listener's port, once started with one.
    public var adminPort: Int? {
        phase.withLock { if case .running(let running) = $0 { running.admin?.server.port } else { nil } }
    }

    /// The URL clients connect to, once started (`wss://` when serving TLS).
    public var url: String {
        "\(configuration.tls == nil ? "ws" : "wss")://\(configuration.host):\(port ?? configuration.port)"
    }

    /// How many client connections are open.
    public var connectionCount: Int { registry.connectionCount }

    /// Reports not ready, waits `configuration.shutdownDrain` (so a load balancer that probes
    /// `/health/ready` stops sending new clients first), then stops accepting, closes every
    /// connection with a going-away code, and stops the modules by cancelling their `run()`; then
    /// closes the bus and, last, the admin listener.
    public func shutdown() async {
        let running = phase.withLock { phase -> Running? in
            defer { phase = .stopped }
            if case .running(let running) = phase { return running }
            return nil
        }
        guard let running else { return }
        clientPort.shuttingDown()
        if configuration.shutdownDrain > .zero {
            configuration.log(.info, "not ready; draining for \(configuration.shutdownDrain)")
            try? await configuration.clock.sleep(for: configuration.shutdownDrain)
        }
        running.listener.stop(code: .goingAway)
        hub.stop()
        running.modules.cancel()
        await running.modules.value
        bus.close()
        running.group.shutdown()
        if let admin = running.admin {
            admin.server.stop()
            admin.group.shutdown()
        }
        configuration.log(.info, "switchboard stopped")
    }

    /// The server's metrics in the Prometheus text format, as `GET /metrics` serves them.
    public func metricsText() async -> String {
        let listener = phase.withLock { phase -> (server: WebSocketServer, group: EventLoopGroup)? in
            if case .running(let running) = phase { (running.listener, running.group) } else { nil }
        }
        return MetricsExposition(
            metrics: metrics, registry: registry, listener: listener, modules: await ModuleStatistics.gather(from: bus),
            cluster: clusterLink
        ).text()
    }

    /// Starts, then runs until the calling task is cancelled, then shuts down (the shape of a
    /// swift-service-lifecycle service).
    public func run() async throws {
        try await start()
        await Cancellation.wait()
        await shutdown()
    }
}

/// Why a server could not start.
public enum ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `start()` was called on a server that was already started (or stopped).
    case alreadyStarted
    /// The admin listener was asked to serve HTTPS, but the server has no certificate.
    case adminTLSWithoutCertificate
    /// The server API's keys could not be loaded, and why.
    case apiKeys(String)

    public var description: String {
        switch self {
        case .alreadyStarted: "the server was started already"
        case .adminTLSWithoutCertificate: "the admin listener serves HTTPS only with the server's TLS certificate"
        case .apiKeys(let reason): reason
        }
    }
}

extension SwitchboardServer {
    /// Closes every connection of `userId` as a network failure would, leaving the sessions to
    /// be resumed (used to test resume).
    func dropConnections(ofUser userId: UserID) {
        for (link, caller) in registry.openLinks where caller?.userId == userId {
            link.socket.close(code: .goingAway, reason: "connection cut")
        }
    }
}
