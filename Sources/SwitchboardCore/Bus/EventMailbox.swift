import Synchronization

/// One subscriber's serial queue of events: a single task drains it, so the subscriber sees
/// events one at a time in the order they were posted.
final class EventMailbox: Sendable {
    typealias Item = (event: any BusEvent, completion: (@Sendable () -> Void)?)

    private let continuation: AsyncStream<Item>.Continuation
    private let drainer: Task<Void, Never>

    init(deliver: @escaping @Sendable (any BusEvent) async -> Void) {
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        drainer = Task {
            for await item in stream {
                await deliver(item.event)
                item.completion?()
            }
        }
    }

    func post(_ event: any BusEvent, completion: (@Sendable () -> Void)?) {
        if case .terminated = continuation.yield((event, completion)) {
            completion?()
        }
    }

    func close() {
        continuation.finish()
    }
}
