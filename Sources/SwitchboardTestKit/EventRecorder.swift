import Synchronization
import SwitchboardCore

/// Records the events of chosen types published on a bus, so a test can wait for and inspect them.
public final class EventRecorder: Sendable {
    private struct State {
        var events: [any BusEvent] = []
        var waiters: [(predicate: @Sendable ([any BusEvent]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    private let subscriptions = Mutex<[ObjectIdentifier: BusSubscription]>([:])

    /// Creates a recorder that records nothing until `record` is called.
    public init() {}

    /// Starts recording events of type `E` from `bus`. Every type recorded from one bus shares one
    /// subscription, so the recording keeps the order in which events of different types were published.
    public func record<E: BusEvent>(_ type: E.Type, on bus: EventBus) {
        subscriptions.withLock { subscriptions in
            let subscription = subscriptions[ObjectIdentifier(bus)] ?? bus.subscription()
            subscription.on(type) { [weak self] event in self?.append(event) }
            subscriptions[ObjectIdentifier(bus)] = subscription
        }
    }

    /// Every recorded event of type `E`, in order.
    public func events<E: BusEvent>(of type: E.Type) -> [E] {
        state.withLock { $0.events.compactMap { $0 as? E } }
    }

    /// Every recorded event, in order.
    public var all: [any BusEvent] { state.withLock { $0.events } }

    /// Waits until at least `count` events of type `E` were recorded, or `timeout` passes (real time).
    /// Returns the events of that type.
    @discardableResult
    public func waitFor<E: BusEvent>(
        _ type: E.Type, count: Int = 1, timeout: Duration = Patience.standard
    ) async -> [E] {
        let predicate: @Sendable ([any BusEvent]) -> Bool = { events in
            events.lazy.filter { $0 is E }.count >= count
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let done = self.state.withLock { state -> Bool in
                        if predicate(state.events) { return true }
                        state.waiters.append((predicate, continuation))
                        return false
                    }
                    if done { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            self.releaseWaiters(force: true)
        }
        return events(of: type)
    }

    /// Forgets what was recorded.
    public func clear() { state.withLock { $0.events.removeAll() } }

    private func append(_ event: any BusEvent) {
        state.withLock { $0.events.append(event) }
        releaseWaiters(force: false)
    }

    private func releaseWaiters(force: Bool) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let events = state.events
            let ready = state.waiters.filter { force || $0.predicate(events) }
            state.waiters.removeAll { force || $0.predicate(events) }
            return ready.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    deinit {
        for subscription in subscriptions.withLock({ $0.values }) { subscription.cancel() }
    }
}
