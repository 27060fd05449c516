import SwitchboardCore

/// A bus, a manual clock and a recording outbox, with modules started on them: the smallest
/// world in which a module can be tested alone.
public struct ModuleHarness: Sendable {
    /// The bus.
    public let bus: EventBus
    /// The clock the modules see.
    public let clock: ManualClock
    /// The outbox the modules see.
    public let outbox: RecordingOutbox
    /// Records events; call `recorder.record(E.self, on: bus)` for the types of interest.
    public let recorder: EventRecorder
    /// The context given to every module.
    public let context: ModuleContext

    /// Creates the world and starts `modules` in order.
    public init(limits: Limits = Limits(), modules: [any Module]) async {
        bus = EventBus()
        clock = ManualClock()
        outbox = RecordingOutbox()
        recorder = EventRecorder()
        context = ModuleContext(bus: bus, clock: clock, limits: limits, outbox: outbox)
        for module in modules { await module.start(context) }
    }
}
