import SwitchboardCore

/// An example of extending the server with an actor no built-in module knows about: it keeps a
/// line for every login, logout and published message, learned from the bus alone.
///
/// Add it with `SwitchboardServer(configuration:) { $0.extensions.append(AuditLog()) }`.
public actor AuditLog: Module {
    public nonisolated let name = "audit-log"
    private var entries: [String] = []

    /// Creates an empty log.
    public init() {}

    public func start(_ context: ModuleContext) async {
        // One subscription for all three types, so the lines keep the order the facts happened in.
        context.bus.subscription()
            .on(SessionOpened.self) { [self] event in await append("login \(event.caller.user)") }
            .on(SessionClosed.self) { [self] event in await append("end \(event.caller.user) \(event.reason)") }
            .on(MessagePublished.self) { [self] event in
                await append(
                    "publish \(event.publisher.user) -> \(event.channel) \(event.payloadBytes)B to \(event.receivers)")
            }
    }

    /// Every line so far, in order.
    public var lines: [String] { entries }

    private func append(_ line: String) { entries.append(line) }
}
