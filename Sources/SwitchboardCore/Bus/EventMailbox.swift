/// One subscriber's serial queue of events: they are handled one at a time in the order they were
/// posted, whatever their types, by a task that runs only while events wait.
final class EventMailbox: Sendable {
    typealias Handler = @Sendable (any BusEvent) async -> Void

    private final class Handlers: Sendable {
        let byType = PortableMutex<[ObjectIdentifier: Handler]>([:])
    }

    private let jobs = SerialJobs()
    private let handlers = Handlers()

    func setHandler(for type: ObjectIdentifier, _ handler: @escaping Handler) {
        handlers.byType.withLock { $0[type] = handler }
    }

    /// Queues `event`; `completion` runs once it is handled, or at once when the mailbox is closed.
    func post(_ event: any BusEvent, completion: (@Sendable () -> Void)?) {
        let handlers = handlers
        let queued = jobs.enqueue {
            let handler = handlers.byType.withLock { $0[ObjectIdentifier(type(of: event))] }
            await handler?(event)
            completion?()
        }
        if !queued { completion?() }
    }

    /// Whether every event posted so far has been handled.
    var isIdle: Bool { jobs.isIdle }

    /// Delivers what is queued, then takes no more events.
    func close() {
        jobs.finish()
    }
}
