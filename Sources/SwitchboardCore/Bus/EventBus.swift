import Synchronization

/// The typed bus every module talks through.
///
/// Events go to every subscriber of their type, each subscriber seeing them in publish order on
/// its own serial mailbox. Requests go to the one handler registered for their type; registering
/// again replaces the handler, which is how a module is swapped.
public final class EventBus: Sendable {
    private struct Registry {
        var subscribers: [ObjectIdentifier: [EventMailbox]] = [:]
        var handlers: [ObjectIdentifier: any Sendable] = [:]
    }

    private let registry = Mutex(Registry())
    /// Serialises `publish` so every subscriber sees events in one global order.
    private let publishOrder = Mutex(())

    /// Creates an empty bus.
    public init() {}

    // MARK: Events

    /// Registers `handler` for events of type `E`. Events published after this call returns are
    /// delivered to it, one at a time, in publish order.
    @discardableResult
    public func subscribe<E: BusEvent>(
        _ type: E.Type, _ handler: @escaping @Sendable (E) async -> Void
    ) -> BusSubscription {
        let mailbox = EventMailbox { event in
            if let typed = event as? E { await handler(typed) }
        }
        registry.withLock { $0.subscribers[ObjectIdentifier(type), default: []].append(mailbox) }
        return BusSubscription { [weak self] in
            mailbox.close()
            self?.registry.withLock { registry in
                registry.subscribers[ObjectIdentifier(type)]?.removeAll { $0 === mailbox }
            }
        }
    }

    /// Publishes `event` to every current subscriber of its type without waiting for them.
    public func publish<E: BusEvent>(_ event: E) {
        publishOrder.withLock { _ in
            let mailboxes = registry.withLock { $0.subscribers[ObjectIdentifier(E.self)] ?? [] }
            for mailbox in mailboxes { mailbox.post(event, completion: nil) }
        }
    }

    /// Publishes `event` and returns once every subscriber has handled it.
    ///
    /// Never call this from inside an event handler: the handler's own mailbox is busy, so
    /// waiting on it would never end. Handlers use `publish`.
    public func publishAndWait<E: BusEvent>(_ event: E) async {
        let countdown: Countdown? = publishOrder.withLock { _ in
            let mailboxes = registry.withLock { $0.subscribers[ObjectIdentifier(E.self)] ?? [] }
            guard !mailboxes.isEmpty else { return nil }
            let countdown = Countdown(mailboxes.count)
            for mailbox in mailboxes { mailbox.post(event) { countdown.tick() } }
            return countdown
        }
        await countdown?.wait()
    }

    /// How many subscribers events of type `E` have.
    public func subscriberCount<E: BusEvent>(of type: E.Type) -> Int {
        registry.withLock { $0.subscribers[ObjectIdentifier(type)]?.count ?? 0 }
    }

    // MARK: Requests

    /// Makes `handler` the one handler of requests of type `R`, replacing any earlier one.
    public func handle<R: BusRequest>(
        _ type: R.Type, _ handler: @escaping @Sendable (R) async throws(RtmError) -> R.Response
    ) {
        let box = RequestHandler<R>(run: handler)
        registry.withLock { $0.handlers[ObjectIdentifier(type)] = box }
    }

    /// Removes the handler of requests of type `R`.
    public func removeHandler<R: BusRequest>(_ type: R.Type) {
        registry.withLock { $0.handlers[ObjectIdentifier(type)] = nil }
    }

    /// Whether a handler is registered for requests of type `R`.
    public func hasHandler<R: BusRequest>(_ type: R.Type) -> Bool {
        registry.withLock { $0.handlers[ObjectIdentifier(type)] != nil }
    }

    /// Sends `request` to its handler and returns the handler's response.
    ///
    /// Throws `RtmError` with `serviceNotSupport` when no module handles requests of this type.
    public func request<R: BusRequest>(_ request: R) async throws(RtmError) -> R.Response {
        let handler = registry.withLock { $0.handlers[ObjectIdentifier(R.self)] } as? RequestHandler<R>
        guard let handler else {
            throw RtmError(.serviceNotSupport, operation: R.operation, reason: "no module handles \(R.self)")
        }
        return try await handler.run(request)
    }
}

/// Keeps an event subscription alive; `cancel` stops delivery.
public final class BusSubscription: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops delivering events to this subscriber. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }
}

private struct RequestHandler<R: BusRequest>: Sendable {
    let run: @Sendable (R) async throws(RtmError) -> R.Response
}

/// Counts handled deliveries of one `publishAndWait` down to zero.
private final class Countdown: Sendable {
    private let state: Mutex<(remaining: Int, waiter: CheckedContinuation<Void, Never>?)>

    init(_ count: Int) { state = Mutex((count, nil)) }

    func tick() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.remaining == 0 { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
