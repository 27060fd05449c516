import Dispatch
import Foundation
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer
import Synchronization

/// `switchboard serve`: runs a server until SIGINT or SIGTERM; SIGHUP reads the configuration
/// again and applies what can change while it runs.
public enum ServeCommand {
    static let table = ServeSettings.table(
        command: "switchboard serve",
        footer: """
            Precedence: flags, then environment variables, then the --config file, then defaults.
            Prints the URL clients connect to once listening; runs until SIGINT or SIGTERM.
            SIGHUP reads the file and the API keys again: log-level, log-format and the per-client
            call rates (limits) change at once, other changes are logged as waiting for a restart.
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
        try await server.start()
        FileHandle.standardOutput.write(Data((server.url + "\n").utf8))
        let stop = AsyncStream<Void>.makeStream()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { stop.continuation.yield() }
        let running = RunningConfiguration(effective)
        let reloads = SignalWatcher(signals: [SIGHUP]) { reload(server, layers, running) }
        for await _ in stop.stream { break }
        signals.stop()
        reloads.stop()
        await server.shutdown()
    }

    /// SIGHUP: the layers read again; what changed applied or named; the API keys read again.
    private static func reload(_ server: SwitchboardServer, _ layers: ConfigurationLayers, _ running: RunningConfiguration) {
        let log = server.configuration.log
        do {
            let plan = ReloadPlan(from: running.current, to: try layers.resolve())
            plan.apply(to: log) { server.updateCallRates(from: $0) }
            running.current = plan.running
            for line in plan.lines { log(.info, line) }
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

/// The configuration a running server is on, changed by each SIGHUP (SIGHUPs are handled one
/// at a time, on the signal source's queue, but the value is read and written under a lock).
final class RunningConfiguration: Sendable {
    private let value: Mutex<EffectiveConfiguration>
    init(_ configuration: EffectiveConfiguration) { value = Mutex(configuration) }
    var current: EffectiveConfiguration {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
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
