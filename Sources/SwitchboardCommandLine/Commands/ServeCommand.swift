import Dispatch
import Foundation
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer

/// `switchboard serve`: runs a server until SIGINT or SIGTERM; SIGHUP reads the configuration
/// again and applies what can change while it runs.
public enum ServeCommand {
    static let table = ServeSettings.table(
        command: "switchboard serve",
        footer: """
            Precedence: flags, then environment variables, then the --config file, then defaults.
            Prints the URL clients connect to once listening; runs until SIGINT or SIGTERM.
            SIGHUP reads the file and the API keys again: log-level, log-format, the limits
            (server-wide and each app's), the apps served with their certificates (when the server
            started with one) and, when the server started with a receiver, the webhook receivers
            and secret file (read again) change at once; other changes are logged as waiting for a
            restart.
            """)

    /// Runs `serve` with `arguments` (those after `serve`) and `environment`.
    public static func run(_ arguments: [String], environment: [String: String]) async throws {
        let options = try table.parse(arguments)
        if options.wantsHelp {
            print(table.help)
            return
        }
        let layers = ConfigurationLayers(options: options, environment: environment)
        let effective = try layers.resolve()
        let start = try ServeStart(effective)
        let configuration = start.configuration
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        let server = SwitchboardServer(configuration: configuration) { modules in
            if !start.credentials.isEmpty { modules.extensions.append(Crypto(credentials: start.credentials)) }
            if let storageKey = start.storageKey { modules.extensions.append(AtRestSealing(key: storageKey)) }
        }
        // The signals are watched before the server starts (and says it listens): a SIGHUP that
        // came between would otherwise end the process, its default action. What comes while it
        // starts waits in the streams.
        let stop = AsyncStream<Void>.makeStream()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { stop.continuation.yield() }
        // SIGHUPs are handled one after the other, in the order they came.
        let hangups = AsyncStream<Void>.makeStream(bufferingPolicy: .unbounded)
        let reloads = SignalWatcher(signals: [SIGHUP]) { hangups.continuation.yield() }
        do {
            try await server.start()
        } catch {
            signals.stop()
            reloads.stop()
            throw error
        }
        FileHandle.standardOutput.write(Data((server.url + "\n").utf8))
        let reloading = Task {
            var running = effective
            var webhookSecret = configuration.webhooks?.secret
            for await _ in hangups.stream { await reload(server, layers, &running, &webhookSecret) }
        }
        for await _ in stop.stream { break }
        signals.stop()
        reloads.stop()
        reloading.cancel()
        hangups.continuation.finish()
        await server.shutdown()
    }

    /// SIGHUP: the layers read again; what changed applied or named (the app certificates before
    /// the apps served and their limits, so an app added is never served without its
    /// certificate); the webhook secret file and the API keys read again.
    private static func reload(
        _ server: SwitchboardServer, _ layers: ConfigurationLayers, _ running: inout EffectiveConfiguration,
        _ webhookSecret: inout [UInt8]?
    ) async {
        let log = server.configuration.log
        // Only a start composes the webhooks module; a module that does not take receivers keeps its own.
        let webhooksRunning = server.bus.hasHandler(ReplaceWebhookReceivers.self)
        // Likewise the token checks: a server that started without certificates lets any token in.
        let certificatesLive = server.bus.hasHandler(ReplaceAppCertificates.self)
        do {
            let reread = try layers.resolve()
            // An unreadable secret file stops the whole reload, as a broken setting does.
            let secret = try webhooksRunning ? reread.text("webhook-secret-file").map(ServeStart.webhookSecret) : nil
            let plan = ReloadPlan(from: running, to: reread, webhooksRunning: webhooksRunning, certificatesLive: certificatesLive)
            let certificates = ServeStart.credentials(of: plan.running)
            if certificatesLive, certificates != ServeStart.credentials(of: running) {
                _ = try await server.bus.request(ReplaceAppCertificates(certificates: certificates))
            }
            plan.apply(to: log, limits: server.limitsBook)
            running = plan.running
            for line in plan.lines { log(.info, line) }
            if webhooksRunning { await replaceWebhookReceivers(server, WebhookReceivers(running), secret, &webhookSecret) }
        } catch {
            log(.error, "reload: \(error); the settings in force stay")
        }
        do {
            try server.reloadAPIKeys()
        } catch {
            log(.error, "\(error); the API keys in force stay")
        }
    }
}

extension ServeCommand {
    /// Puts `receivers` and `secret` (the key read now; nil keeps `inForce`) in force in the
    /// running webhooks module, and logs what it gave up.
    private static func replaceWebhookReceivers(
        _ server: SwitchboardServer, _ receivers: WebhookReceivers, _ secret: [UInt8]?, _ inForce: inout [UInt8]?
    ) async {
        let log = server.configuration.log
        guard let key = secret ?? inForce else { return }
        do {
            let replaced = try await server.bus.request(
                ReplaceWebhookReceivers(everyApp: receivers.everyApp, perApp: receivers.perApp, secret: key))
            if let inForceKey = inForce, inForceKey != key { log(.info, "reload: the webhook secret changed") }
            inForce = key
            let count = receivers.everyApp.count + receivers.perApp.values.map(\.count).reduce(0, +)
            log(.info, "reload: webhooks: \(count) receivers in force\(replaced.givenUp > 0 ? ", \(replaced.givenUp) waiting deliveries to receivers no longer configured given up" : "")")
        } catch {
            log(.error, "reload: the webhooks did not take the new receivers: \(error); theirs stay")
        }
    }
}

/// The command line, the environment and the file of `serve` (or `config show`): resolved again
/// on every SIGHUP, reading the file anew.
struct ConfigurationLayers: Sendable {
    let options: ParsedOptions
    let environment: [String: String]

    /// The file named by `--config` or `SWITCHBOARD_CONFIG`.
    var filePath: String? { options.value("config") ?? environment["SWITCHBOARD_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } }

    func resolve() throws -> EffectiveConfiguration {
        let file = try filePath.map { try ConfigFile.read($0) }
        return try EffectiveConfiguration.resolve(options, environment: environment, file: file)
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
