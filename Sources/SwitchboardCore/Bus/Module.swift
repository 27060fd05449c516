/// What the server gives a module when it starts: the bus and the shared services.
public struct ModuleContext: Sendable {
    /// The bus to register handlers and subscriptions on.
    public let bus: EventBus
    /// The clock for every timeout.
    public let clock: any SwitchboardClock
    /// The limits in force, the server's and each app's, swapped whole by a reload.
    public let limitsBook: LimitsBook
    /// Where pushes to sessions go.
    public let outbox: any Outbox
    /// The log, labelled with the module's name.
    public let log: SwitchboardLog

    /// Bundles the services for a module, with `limits` for every app.
    public init(
        bus: EventBus, clock: any SwitchboardClock, limits: Limits, outbox: any Outbox,
        log: SwitchboardLog = SwitchboardLog(level: .none)
    ) {
        self.init(bus: bus, clock: clock, limitsBook: LimitsBook(limits: limits), outbox: outbox, log: log)
    }

    /// Bundles the services for a module, with the limits of `limitsBook`.
    public init(
        bus: EventBus, clock: any SwitchboardClock, limitsBook: LimitsBook, outbox: any Outbox,
        log: SwitchboardLog = SwitchboardLog(level: .none)
    ) {
        self.bus = bus
        self.clock = clock
        self.limitsBook = limitsBook
        self.outbox = outbox
        self.log = log
    }

    /// The server's limits in force now: those of what belongs to no app (names, intervals,
    /// buffers). A request reads its app's with `limits(for:)`.
    public var limits: Limits { limitsBook.server }

    /// The limits of `app` in force now (its own, else the server's): read once per request with
    /// the caller's app, and kept for the rest of the request.
    public func limits(for app: AppID) -> Limits { limitsBook.limits(for: app) }

    /// Runs `body` on the limits of `app` in force now, where they lie: a request on a hot path
    /// reads them so, without copying them.
    @inlinable
    public func withLimits<Value>(for app: AppID, _ body: (borrowing Limits) -> Value) -> Value {
        limitsBook.withLimits(for: app, body)
    }

    /// The same context with the log labelled `name`, as one module sees it.
    public func labeled(_ name: String) -> ModuleContext {
        ModuleContext(bus: bus, clock: clock, limitsBook: limitsBook, outbox: outbox, log: log.labeled(name))
    }
}

/// A unit of the server: an actor that registers its request handlers and event subscriptions on
/// the bus, and may do long-running work.
///
/// The lifecycle follows swift-service-lifecycle: the server calls `start` on every module, in
/// order, before it accepts connections; then it runs every module's `run()` as a child of one
/// task group. Shutdown is cancellation: `run()` returns when its task is cancelled, and the
/// server then closes the bus, which ends every subscription.
public protocol Module: Sendable {
    /// A short name for logs (`"session"`, `"message-router"` …).
    var name: String { get }
    /// Registers handlers and subscriptions. Returns once they are all registered.
    func start(_ context: ModuleContext) async
    /// Long-running work (timers, sweeps) until the task is cancelled. The default waits for
    /// cancellation and does nothing else.
    func run() async throws
}

extension Module {
    public func run() async throws {
        await Cancellation.wait()
    }
}
