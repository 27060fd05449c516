import Dispatch
import Foundation
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer

/// `switchboard serve`: runs a server until SIGINT or SIGTERM.
enum ServeCommand {
    static let usage = """
        switchboard serve [options]
          --listen HOST:PORT        where to listen (SWITCHBOARD_LISTEN, default 127.0.0.1:9100)
          --data-dir DIR            persistent data (SWITCHBOARD_DATA_DIR, default ./switchboard-data)
          --app-id ID               serve only this app id; repeatable (SWITCHBOARD_APP_ID, comma-separated)
          --app-certificate CERT    require tokens signed with this certificate, paired with --app-id
                                    in order (SWITCHBOARD_APP_CERTIFICATE, comma-separated)
          --log-level LEVEL         debug, info, warning, error or none (SWITCHBOARD_LOG_LEVEL, default info)
          --no-rate-limits          lift the per-client rate limits, for load tests only
                                    (SWITCHBOARD_NO_RATE_LIMITS=1)
        """

    static func run(_ arguments: [String]) async throws {
        let options = try CommandLineOptions(
            arguments, flagNames: ["no-rate-limits", "help"], environment: ProcessInfo.processInfo.environment)
        if options.givenNames.contains("help") {
            print(usage)
            return
        }
        var configuration = ServerConfiguration()
        (configuration.host, configuration.port) = try hostAndPort(
            options.value("listen", env: "SWITCHBOARD_LISTEN") ?? "127.0.0.1:9100")
        configuration.dataDirectory = options.value("data-dir", env: "SWITCHBOARD_DATA_DIR") ?? "./switchboard-data"
        let levelName = options.value("log-level", env: "SWITCHBOARD_LOG_LEVEL") ?? "info"
        guard let level = ServerLog.Level(name: levelName) else { throw UsageError("unknown log level '\(levelName)'") }
        configuration.log = ServerLog(level: level)
        if options.flag("no-rate-limits", env: "SWITCHBOARD_NO_RATE_LIMITS") {
            configuration.limits = .withoutRateLimits
        }
        let appIds = options.list("app-id", env: "SWITCHBOARD_APP_ID")
        let certificates = options.list("app-certificate", env: "SWITCHBOARD_APP_CERTIFICATE")
        guard certificates.isEmpty || certificates.count == appIds.count else {
            throw UsageError("give one --app-certificate per --app-id")
        }
        if !appIds.isEmpty { configuration.appIds = Set(appIds) }
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)

        let credentials = Dictionary(zip(appIds, certificates), uniquingKeysWith: { _, last in last })
        let server = SwitchboardServer(configuration: configuration) { modules in
            if !credentials.isEmpty { modules.extensions.append(Crypto(credentials: credentials)) }
        }
        let runner = Task { try await server.run() }
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { runner.cancel() }
        while server.port == nil {
            try await Task.sleep(for: .milliseconds(10))
            if runner.isCancelled { break }
        }
        if server.port != nil {
            FileHandle.standardOutput.write(Data((server.url + "\n").utf8))
        }
        try await runner.value
        signals.stop()
    }
}

extension ServeCommand {
    /// Splits a `--listen` value into host and port.
    static func hostAndPort(_ listen: String) throws -> (String, Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw UsageError("--listen takes HOST:PORT, not '\(listen)'") }
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
