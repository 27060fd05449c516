import SwitchboardCore
import SwitchboardServer

/// Starts in-process servers for tests: on 127.0.0.1, on a free port, quiet unless asked.
public enum TestServer {
    /// Starts a server on a free port; `customize` may change the configuration and the modules.
    public static func start(
        clock: any SwitchboardClock = SystemClock(),
        limits: Limits = Limits(),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        modules: (inout ServerModules) -> Void = { _ in }
    ) async throws -> SwitchboardServer {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.clock = clock
        configuration.limits = limits
        configuration.eventLoopThreads = 1
        configuration.log = ServerLog(level: .warning)
        configuration.metadataStorage = .memory
        configure(&configuration)
        let server = SwitchboardServer(configuration: configuration, customize: modules)
        try await server.start()
        return server
    }
}
