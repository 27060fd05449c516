import Synchronization

/// One subscriber's serial queue of events: a single task drains it, so the subscriber sees
/// events one at a time in the order they were posted, whatever their types.
final class EventMailbox: Sendable {
    typealias Item = (event: any BusEvent, completion: (@Sendable () -> Void)?)
    typealias Handler = @Sendable (any BusEvent) async -> Void

    private final class Handlers: Sendable {
        let byType = Mutex<[ObjectIdentifier: Handler]>([:])
    }

    private let continuation: AsyncStream<Item>.Continuation
    private let handlers = Handlers()

    init() {
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        let handlers = handlers
        Task {
            for await item in stream {
                let handler = handlers.byType.withLock { $0[ObjectIdentifier(type(of: item.event))] }
                await handler?(item.event)
                item.completion?()
            }
        }
    }

    func setHandler(for type: ObjectIdentifier, _ handler: @escaping Handler) {
        handlers.byType.withLock { $0[type] = handler }
    }

    func post(_ event: any BusEvent, completion: (@Sendable () -> Void)?) {
        if case .terminated = continuation.yield((event, completion)) {
            completion?()
        }
    }

    /// Delivers what is queued, then ends the draining task.
    func close() {
        continuation.finish()
    }
}
