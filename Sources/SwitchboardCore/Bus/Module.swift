/// What the server gives a module when it starts: the bus and the shared services.
public struct ModuleContext: Sendable {
    /// The bus to register handlers and subscriptions on.
    public let bus: EventBus
    /// The clock for every timeout.
    public let clock: any SwitchboardClock
    /// The limits in force.
    public let limits: Limits
    /// Where pushes to sessions go.
    public let outbox: any Outbox

    /// Bundles the services for a module.
    public init(bus: EventBus, clock: any SwitchboardClock, limits: Limits, outbox: any Outbox) {
        self.bus = bus
        self.clock = clock
        self.limits = limits
        self.outbox = outbox
    }
}

/// A unit of the server: registers its request handlers and event subscriptions on the bus.
///
/// The server calls `start` once before it accepts connections and `shutdown` once when it stops.
public protocol Module: Sendable {
    /// A short name for logs (`"session"`, `"message-router"` …).
    var name: String { get }
    /// Registers handlers and subscriptions. Returns once they are all registered.
    func start(_ context: ModuleContext) async
    /// Cancels timers and releases resources.
    func shutdown() async
}

extension Module {
    public func shutdown() async {}
}
