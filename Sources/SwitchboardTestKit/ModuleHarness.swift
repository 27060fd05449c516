import SwitchboardCore

/// A bus, a manual clock and a recording outbox, with modules started and running on them: the
/// smallest world in which a module can be tested alone.
public final class ModuleHarness: Sendable {
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
    private let runs: Task<Void, Never>

    /// Creates the world, starts `modules` in order, and runs their `run()` until `stop()`.
    public init(limits: Limits = Limits(), log: SwitchboardLog = SwitchboardLog(level: .none), modules: [any Module]) async {
        bus = EventBus()
        clock = ManualClock()
        outbox = RecordingOutbox()
        recorder = EventRecorder()
        context = ModuleContext(bus: bus, clock: clock, limits: limits, outbox: outbox, log: log)
        for module in modules { await module.start(context.labeled(module.name)) }
        runs = Task {
            await withDiscardingTaskGroup { group in
                for module in modules { group.addTask { try? await module.run() } }
            }
        }
    }

    /// Cancels every module's `run()`, waits for them to return, and closes the bus.
    public func stop() async {
        runs.cancel()
        await runs.value
        bus.close()
    }

    deinit { runs.cancel() }
}
