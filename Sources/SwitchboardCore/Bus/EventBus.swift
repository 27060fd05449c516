/// The typed bus every module talks through.
///
/// Events go to every subscriber of their type, each subscriber seeing them in publish order on
/// its own serial mailbox. Requests go to the one handler registered for their type; registering
/// again replaces the handler, which is how a module is swapped.
public final class EventBus: Sendable {
    private struct Registry {
        var subscribers: [ObjectIdentifier: [EventMailbox]] = [:]
        var observers: [ObjectIdentifier: [any Sendable]] = [:]
        /// Each a `RequestHandler<R>` under the `ObjectIdentifier` of its `R`.
        private var handlers: [ObjectIdentifier: AnyRequestHandler] = [:]
        /// Every table of `handlers` made so far, the current one last. All are kept as long as
        /// the bus, so a lookup without the lock never reads a freed table, and a handler stays
        /// alive for `answerAtOnce`, which runs it without retaining it. Handlers are registered
        /// a few times in a server's life, so this stays small.
        private var tables = [HandlerTable([:])]
        var closed = false

        /// The current table of handlers, not retained (`tables` keeps it).
        var currentTable: Unmanaged<HandlerTable> { .passUnretained(tables[tables.count - 1]) }

        /// Makes `handler` (nil: none) the handler under `type`.
        mutating func setHandler(_ handler: AnyRequestHandler?, for type: ObjectIdentifier) {
            handlers[type] = handler
            tables.append(HandlerTable(handlers))
        }

        /// Forgets every handler.
        mutating func removeAllHandlers() {
            handlers.removeAll()
            tables.append(HandlerTable(handlers))
        }

        /// The live counts handed out by `listenerCount(of:)`, by event type.
        var counts: [ObjectIdentifier: ListenerCount] = [:]

        /// How many subscribers and observers events of `type` have.
        func count(of type: ObjectIdentifier) -> Int {
            (subscribers[type]?.count ?? 0) + (observers[type]?.count ?? 0)
        }

        /// Brings the live count of `type`, if one was handed out, up to date.
        func recount(_ type: ObjectIdentifier) {
            counts[type]?.value.store(count(of: type), ordering: .releasing)
        }

        /// The mailboxes and the observers of events of type `E`.
        func audience<E: BusEvent>(of type: E.Type) -> (mailboxes: [EventMailbox], observers: [any Sendable]) {
            (subscribers[ObjectIdentifier(type)] ?? [], observers[ObjectIdentifier(type)] ?? [])
        }
    }

    private let registry = PortableMutex(Registry())
    /// `registry`'s current table of request handlers, read without its lock; set under it.
    private let handlerTable: PortableAtomic<Unmanaged<HandlerTable>>
    /// Extension operations, routed by name (see `ExtensionDirectory`).
    let extensions = ExtensionDirectory()
    /// Serialises `publish` so every subscriber sees events in one global order.
    private let publishOrder = PortableMutex(())

    /// Creates an empty bus.
    public init() {
        handlerTable = PortableAtomic(registry.withLock { $0.currentTable })
    }

    /// Changes the handlers with `change`, under the registry's lock, and publishes their new table.
    private func changeHandlers(_ change: (inout Registry) -> Void) {
        registry.withLock { registry in
            change(&registry)
            handlerTable.store(registry.currentTable, ordering: .releasing)
        }
    }

    // MARK: Events

    /// A new subscription with one mailbox and no event types yet; add types with `on`. Events of
    /// every type it registers reach it one at a time, in the order they were published.
    public func subscription() -> BusSubscription {
        BusSubscription(bus: self)
    }

    /// Registers `handler` for events of type `E` on a subscription of its own. Events published
    /// after this call returns are delivered to it, one at a time, in publish order.
    @discardableResult
    public func subscribe<E: BusEvent>(
        _ type: E.Type, _ handler: @escaping @Sendable (E) async -> Void
    ) -> BusSubscription {
        subscription().on(type, handler)
    }

    func register(_ mailbox: EventMailbox, for type: ObjectIdentifier) {
        registry.withLock { registry in
            guard !registry.closed else { return }
            if !(registry.subscribers[type] ?? []).contains(where: { $0 === mailbox }) {
                registry.subscribers[type, default: []].append(mailbox)
            }
            registry.recount(type)
        }
    }

    /// Registers `observer` for events of type `E`: it runs inside `publish`, on the publisher's
    /// thread, before `publish` returns, and sees the events of its type in publish order. It is
    /// for keeping a view of facts that must be current once the publisher goes on (a lookup
    /// table); it must be quick, must not wait, and must not publish.
    public func observe<E: BusEvent>(_ type: E.Type, _ observer: @escaping @Sendable (E) -> Void) {
        let box = EventObserver<E>(see: observer)
        registry.withLock { registry in
            guard !registry.closed else { return }
            registry.observers[ObjectIdentifier(type), default: []].append(box)
            registry.recount(ObjectIdentifier(type))
        }
    }

    func unregister(_ mailbox: EventMailbox) {
        registry.withLock { registry in
            for type in registry.subscribers.keys {
                guard registry.subscribers[type]?.contains(where: { $0 === mailbox }) == true else { continue }
                registry.subscribers[type]?.removeAll { $0 === mailbox }
                registry.recount(type)
            }
        }
    }

    /// Publishes `event` to every current subscriber of its type without waiting for them.
    public func publish<E: BusEvent>(_ event: E) {
        publishOrder.withLock { _ in
            let (mailboxes, observers) = registry.withLock { $0.audience(of: E.self) }
            EventObserver.show(event, to: observers)
            for mailbox in mailboxes { mailbox.post(event, completion: nil) }
        }
    }

    /// Queues `event` in `mailbox` alone, after every event a publish has begun to hand out:
    /// a publish posts to its subscribers one after another, and a subscriber that has handled
    /// the event may act on it before the next one has it queued; what that action queues must
    /// not overtake the event (`BusSubscription.settle`).
    func post(_ event: any BusEvent, inPublishOrderTo mailbox: EventMailbox, completion: @escaping @Sendable () -> Void) {
        publishOrder.withLock { _ in mailbox.post(event, completion: completion) }
    }

    /// Whether `mailbox` has handled every event published so far, a publish still handing one
    /// out included (it holds the publish order until it has posted to every subscriber).
    func hasHandledEverythingPublished(_ mailbox: EventMailbox) -> Bool {
        publishOrder.withLock { _ in mailbox.isIdle }
    }

    /// Publishes `event` and returns once every subscriber has handled it.
    ///
    /// Never call this from inside an event handler: the handler's own mailbox is busy, so
    /// waiting on it would never end. Handlers use `publish`.
    public func publishAndWait<E: BusEvent>(_ event: E) async {
        let countdown: Countdown? = publishOrder.withLock { _ in
            let (mailboxes, observers) = registry.withLock { $0.audience(of: E.self) }
            EventObserver.show(event, to: observers)
            guard !mailboxes.isEmpty else { return nil }
            let countdown = Countdown(mailboxes.count)
            for mailbox in mailboxes { mailbox.post(event) { countdown.tick() } }
            return countdown
        }
        await countdown?.wait()
    }

    /// How many subscribers and observers events of type `E` have.
    public func subscriberCount<E: BusEvent>(of type: E.Type) -> Int {
        registry.withLock { $0.count(of: ObjectIdentifier(type)) }
    }

    /// The number of subscribers and observers of `E`, kept current by the bus as they come and
    /// go: a publisher that builds an event only when someone listens reads it on every message
    /// without taking the bus's lock.
    public func listenerCount<E: BusEvent>(of type: E.Type) -> ListenerCount {
        registry.withLock { registry in
            let key = ObjectIdentifier(type)
            if let count = registry.counts[key] { return count }
            let count = ListenerCount(registry.count(of: key))
            registry.counts[key] = count
            return count
        }
    }

    /// Ends every subscription and forgets every handler: what was published before is still
    /// delivered, nothing after. The server calls this when it shuts down.
    public func close() {
        let mailboxes = registry.withLock { registry -> [EventMailbox] in
            registry.closed = true
            defer {
                registry.subscribers.removeAll()
                registry.observers.removeAll()
                for count in registry.counts.values { count.value.store(0, ordering: .releasing) }
                registry.removeAllHandlers()
                handlerTable.store(registry.currentTable, ordering: .releasing)
            }
            return registry.subscribers.values.flatMap { $0 }
        }
        for mailbox in mailboxes { mailbox.close() }
        extensions.removeAll()
    }

    // MARK: Requests

    /// Makes `handler` the one handler of requests of type `R`, replacing any earlier one.
    public func handle<R: BusRequest>(
        _ type: R.Type, _ handler: @escaping @Sendable (R) async throws(RtmError) -> R.Response
    ) {
        register(RequestHandler<R>(run: handler, now: nil), for: type)
    }

    /// Makes `handler` the one handler of requests of type `R`, replacing any earlier one, and
    /// says it answers without suspending: a caller on any thread (an event loop answering a
    /// client's frame) may run it at once through `answerAtOnce`. It must be quick and
    /// must never wait.
    public func handleImmediately<R: BusRequest>(
        _ type: R.Type, _ handler: @escaping @Sendable (R) throws(RtmError) -> R.Response
    ) {
        register(
            RequestHandler<R>(
                run: { request throws(RtmError) in try handler(request) },
                now: { request throws(RtmError) in try handler(request) }),
            for: type)
    }

    /// Makes `atOnce` and `later` together the one handler of requests of type `R`: `atOnce`
    /// answers without suspending (as with `handleImmediately`) or returns nil, having changed
    /// nothing, for a request it must suspend for; `later` answers those. A caller answering at
    /// once (`answerAtOnce`) gets nil for them and sends them with `request`.
    public func handleAtOnceWhenPossible<R: BusRequest>(
        _ type: R.Type, atOnce: @escaping @Sendable (R) throws(RtmError) -> R.Response?,
        later: @escaping @Sendable (R) async throws(RtmError) -> R.Response
    ) {
        register(
            RequestHandler<R>(
                run: { request throws(RtmError) in
                    if let answer = try atOnce(request) { return answer }
                    return try await later(request)
                },
                now: atOnce),
            for: type)
    }

    /// Makes `start` the one handler of requests of type `R`, replacing any earlier one: it
    /// carries a request out without making its caller wait, and calls `reply` once, on any
    /// thread, with the answer (a forward whose answer comes from the network). A caller that
    /// must not wait hands it the request with `start(_:reply:)`; `request` awaits the reply.
    public func handleStarting<R: BusRequest>(
        _ type: R.Type, _ start: @escaping @Sendable (R, @escaping Reply<R>) -> Void
    ) {
        register(RequestHandler<R>(start: start, atOnce: nil), for: type)
    }

    /// Makes `atOnce` and `start` together the one handler of requests of type `R`: `atOnce`
    /// answers without suspending or returns nil, having changed nothing, and `start` carries
    /// those out, calling its reply once, on any thread, when the answer is known. A caller on an
    /// event loop (`answerAtOnceOrStart`) gets the first kind answered and the second started,
    /// never waiting for either.
    public func handleAtOnceOrStarting<R: BusRequest>(
        _ type: R.Type, atOnce: @escaping @Sendable (R) throws(RtmError) -> R.Response?,
        start: @escaping @Sendable (R, @escaping Reply<R>) -> Void
    ) {
        register(RequestHandler<R>(start: start, atOnce: atOnce), for: type)
    }

    /// Hands `request` to its handler and returns at once; `reply` gets the answer, once, on any
    /// thread. A handler that answers at once or starts (`handleAtOnceOrStarting`,
    /// `handleStarting`) does so on the calling thread, with no task; any other is run in a task.
    public func start<R: BusRequest>(_ request: R, reply: @escaping Reply<R>) {
        guard let handler = handler(for: R.self) else {
            return reply(.failure(RtmError(.serviceNotSupport, operation: R.operation, reason: "no module handles \(R.self)")))
        }
        if let start = handler.start {
            do throws(RtmError) {
                if let now = handler.now, let answer = try now(request) { return reply(.success(answer)) }
            } catch {
                return reply(.failure(error))
            }
            start(request, reply)
        } else {
            Task {
                do throws(RtmError) {
                    reply(.success(try await handler.run(request)))
                } catch {
                    reply(.failure(error))
                }
            }
        }
    }

    /// Like `answerAtOnce`, and for a request its handler must wait for, started when the handler
    /// can start it (`handleAtOnceOrStarting`): `reply` (made then, by `makeReply`) gets its
    /// answer later, on any thread. `.mustWait` when neither: use `request` then.
    @inlinable
    public func answerAtOnceOrStart<R: BusRequest>(
        _ type: R.Type, _ make: () throws(RtmError) -> R, orStart makeReply: () -> Reply<R>
    ) throws(RtmError) -> ImmediateOutcome<R.Response> {
        guard let found = handlerUnretained(for: ObjectIdentifier(type)) else { return .mustWait }
        // The box under R's identifier is a RequestHandler<R> (`register` puts it there).
        let outcome: Result<ImmediateOutcome<R.Response>, RtmError> = found._withUnsafeGuaranteedRef { box in
            do throws(RtmError) {
                return .success(try unsafeDowncast(box, to: RequestHandler<R>.self).answerNowOrStart(make, makeReply))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private func handler<R: BusRequest>(for type: R.Type) -> RequestHandler<R>? {
        // The box under R's identifier is always a RequestHandler<R> (`register` puts it there).
        guard let box = handlerUnretained(for: ObjectIdentifier(type))?.takeUnretainedValue() else { return nil }
        return unsafeDowncast(box, to: RequestHandler<R>.self)
    }

    private func register<R: BusRequest>(_ box: RequestHandler<R>, for type: R.Type) {
        register(box, for: ObjectIdentifier(type))
    }

    /// Makes `box` the handler under `type`, replacing any earlier one.
    func register(_ box: AnyRequestHandler, for type: ObjectIdentifier) {
        changeHandlers { registry in
            guard !registry.closed else { return }
            registry.setHandler(box, for: type)
        }
    }

    /// Answers the request `make` builds on the calling thread, when the handler of `R` answers
    /// without suspending (registered with `handleImmediately`); returns nil, without calling
    /// `make`, when it suspends or there is none, and nil after calling `make` when the handler
    /// must suspend for this request (`handleAtOnceWhenPossible`): use `request` then.
    ///
    /// This is the server's path for every publish, run on two event loops at once: it takes the
    /// handler without retaining it, so the threads do not contend for its reference count, and
    /// it is inlined into the caller, so it is specialised for `R` there.
    @inlinable
    public func answerAtOnce<R: BusRequest>(
        _ type: R.Type, _ make: () throws(RtmError) -> R
    ) throws(RtmError) -> R.Response? {
        guard let found = handlerUnretained(for: ObjectIdentifier(type)) else { return nil }
        // The box under R's identifier is a RequestHandler<R> (`register` puts it there).
        let answer: Result<R.Response?, RtmError> = found._withUnsafeGuaranteedRef { box in
            do throws(RtmError) {
                return .success(try unsafeDowncast(box, to: RequestHandler<R>.self).answerNow(make))
            } catch {
                return .failure(error)
            }
        }
        return try answer.get()
    }

    /// The handler registered under `type`, not retained, found without a lock. Safe: every
    /// table of handlers the registry made lives as long as the bus, and the caller holds the bus.
    @usableFromInline
    func handlerUnretained(for type: ObjectIdentifier) -> Unmanaged<AnyRequestHandler>? {
        handlerTable.load(ordering: .acquiring)._withUnsafeGuaranteedRef { $0.handler(for: type) }
    }

    /// Removes the handler of requests of type `R`.
    public func removeHandler<R: BusRequest>(_ type: R.Type) {
        changeHandlers { $0.setHandler(nil, for: ObjectIdentifier(type)) }
    }

    /// Whether a handler is registered for requests of type `R`.
    public func hasHandler<R: BusRequest>(_ type: R.Type) -> Bool {
        handlerUnretained(for: ObjectIdentifier(type)) != nil
    }

    /// Sends `request` to its handler and returns the handler's response.
    ///
    /// Throws `RtmError` with `serviceNotSupport` when no module handles requests of this type.
    public func request<R: BusRequest>(_ request: R) async throws(RtmError) -> R.Response {
        let handler = handler(for: R.self)
        guard let handler else {
            throw RtmError(.serviceNotSupport, operation: R.operation, reason: "no module handles \(R.self)")
        }
        return try await handler.run(request)
    }
}

/// One subscriber of the bus: a serial mailbox and a handler per event type.
///
/// Events of every type registered with `on` arrive one at a time, in publish order, so a
/// subscriber that listens to `ChannelJoined` and `ChannelLeft` never sees a leave before its join.
public final class BusSubscription: Sendable {
    weak let bus: EventBus?
    let mailbox: EventMailbox

    init(bus: EventBus) {
        self.bus = bus
        mailbox = EventMailbox()
    }

    /// Adds events of type `E`, handled by `handler`. Events published after this call returns
    /// are delivered. Returns the subscription, so calls chain.
    @discardableResult
    public func on<E: BusEvent>(_ type: E.Type, _ handler: @escaping @Sendable (E) async -> Void) -> BusSubscription {
        mailbox.setHandler(for: ObjectIdentifier(type)) { event in
            if let typed = event as? E { await handler(typed) }
        }
        bus?.register(mailbox, for: ObjectIdentifier(type))
        return self
    }

    /// Stops delivering events to this subscriber. Calling it again does nothing.
    public func cancel() {
        bus?.unregister(mailbox)
        mailbox.close()
    }
}

/// A request handler of some request type, so the registry can hold them all.
@usableFromInline
class AnyRequestHandler: @unchecked Sendable {
    // Sendable proof: it has no state; its subclasses (`RequestHandler`, `InPlaceHandler`) hold
    // only `let` Sendable closures.
}

@usableFromInline
final class RequestHandler<R: BusRequest>: AnyRequestHandler, @unchecked Sendable {
    // Sendable proof: every stored property is an immutable `let` of a Sendable closure type.
    let run: @Sendable (R) async throws(RtmError) -> R.Response
    /// The same handler, when it answers without suspending; nil from it: this request must wait.
    @usableFromInline let now: (@Sendable (R) throws(RtmError) -> R.Response?)?
    /// The same handler, when it can carry a request out without its caller waiting, replying
    /// later; for the requests `now` left (all of them, without a `now`).
    @usableFromInline let start: (@Sendable (R, @escaping Reply<R>) -> Void)?

    init(run: @escaping @Sendable (R) async throws(RtmError) -> R.Response, now: (@Sendable (R) throws(RtmError) -> R.Response?)?) {
        self.run = run
        self.now = now
        start = nil
    }

    /// A handler that answers through `start` what `atOnce` (if any) leaves; `run` awaits the reply.
    init(start: @escaping @Sendable (R, @escaping Reply<R>) -> Void, atOnce: (@Sendable (R) throws(RtmError) -> R.Response?)?) {
        run = { request throws(RtmError) in
            if let atOnce, let answer = try atOnce(request) { return answer }
            let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<R.Response, RtmError>, Never>) in
                start(request) { continuation.resume(returning: $0) }
            }
            return try result.get()
        }
        now = atOnce
        self.start = start
    }

    /// Runs `now` on the request `make` builds, then, when it must wait, `start` with the reply
    /// `makeReply` makes; `.mustWait`, without calling `make`, when the handler has neither.
    @inlinable
    func answerNowOrStart(_ make: () throws(RtmError) -> R, _ makeReply: () -> Reply<R>) throws(RtmError)
        -> ImmediateOutcome<R.Response>
    {
        // Bound, not compared with nil: `!=` on an optional typed-throws function needs type
        // metadata older Apple systems lack (tools/check-sdk-typed-throws.py).
        var answersNow = false
        if let _ = now { answersNow = true }
        guard answersNow || start != nil else { return .mustWait }
        let request = try make()
        if let now, let answer = try now(request) { return .answered(answer) }
        guard let start else { return .mustWait }
        start(request, makeReply())
        return .started
    }

    /// Runs `now` on the request `make` builds; nil, without calling `make`, when there is no
    /// `now`, and nil when `now` must wait for this request.
    @inlinable
    func answerNow(_ make: () throws(RtmError) -> R) throws(RtmError) -> R.Response? {
        guard let now else { return nil }
        return try now(try make())
    }
}

private struct EventObserver<E: BusEvent>: Sendable {
    let see: @Sendable (E) -> Void

    static func show(_ event: E, to observers: [any Sendable]) {
        for observer in observers { (observer as? EventObserver<E>)?.see(event) }
    }
}

/// Counts handled deliveries of one `publishAndWait` down to zero.
private final class Countdown: Sendable {
    private let state: PortableMutex<(remaining: Int, waiter: CheckedContinuation<Void, Never>?)>

    init(_ count: Int) { state = PortableMutex((count, nil)) }

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

/// How many subscribers and observers one event type has now (`EventBus.listenerCount(of:)`).
public final class ListenerCount: Sendable {
    let value: PortableAtomic<Int>

    init(_ count: Int) { value = PortableAtomic(count) }

    /// The count now.
    public var current: Int { value.load(ordering: .acquiring) }
}
