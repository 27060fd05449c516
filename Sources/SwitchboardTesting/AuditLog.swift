import SwitchboardCore

/// An example of extending the server with an actor no built-in module knows about: it keeps a
/// line for every login, logout and published message, learned from the bus alone.
///
/// Add it with `SwitchboardServer(configuration:) { $0.extensions.append(AuditLog()) }`.
public actor AuditLog: Module {
    public nonisolated let name = "audit-log"
    private var entries: [String] = []
    private var subscriptions: [BusSubscription] = []

    /// Creates an empty log.
    public init() {}

    public func start(_ context: ModuleContext) async {
        let bus = context.bus
        subscriptions = [
            bus.subscribe(SessionOpened.self) { [self] event in await append("login \(event.userId)") },
            bus.subscribe(SessionClosed.self) { [self] event in await append("end \(event.userId) \(event.reason)") },
            bus.subscribe(MessagePublished.self) { [self] event in
                await append("publish \(event.publisher) -> \(event.channel) \(event.payloadBytes)B to \(event.receivers)")
            },
        ]
    }

    public func shutdown() async {
        for subscription in subscriptions { subscription.cancel() }
        subscriptions = []
    }

    /// Every line so far, in order.
    public var lines: [String] { entries }

    private func append(_ line: String) { entries.append(line) }
}
