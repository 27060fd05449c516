import SwitchboardCore
import SwitchboardWire

/// Turns one connection's frames into bus requests, in order, and answers each.
///
/// The loop is generic: who the caller is, a sign of life for the session, the rate budget, the
/// answer. What an operation means is its feature's binding (`Features/`): one line per feature.
struct RequestDispatcher<Connection: LinkConnection>: Sendable {
    let bus: EventBus
    let registry: SessionRegistry<Connection>
    let clock: any SwitchboardClock
    let log: ServerLog
    /// What each new link copies to count its calls (the limits book in it is shared).
    let callLimiter: CallRateLimiter
    /// Where logins, requests and publishes are counted.
    let metrics: ServerMetrics

    init(
        bus: EventBus, registry: SessionRegistry<Connection>, clock: any SwitchboardClock, limitsBook: LimitsBook, log: ServerLog,
        metrics: ServerMetrics = ServerMetrics()
    ) {
        self.bus = bus
        self.registry = registry
        self.clock = clock
        self.log = log
        self.metrics = metrics
        callLimiter = CallRateLimiter(limitsBook: limitsBook)
    }

    /// A dispatcher under `limits` for every app.
    init(
        bus: EventBus, registry: SessionRegistry<Connection>, clock: any SwitchboardClock, limits: Limits, log: ServerLog,
        metrics: ServerMetrics = ServerMetrics()
    ) {
        self.init(bus: bus, registry: registry, clock: clock, limitsBook: LimitsBook(limits: limits), log: log, metrics: metrics)
    }

    /// Answers the frames queued on `link`, in order, until none are left.
    func serve(_ link: ClientLink<Connection>) async {
        while true {
            switch link.takeReceived() {
            case .frames(let items):
                for item in items { await answer(item, on: link) }
            case .drained(let connectionClosed):
                if connectionClosed { linkClosed(link) }
                return
            }
        }
    }

    /// A closed link's requests are all answered: forget it, and tell the session module if the
    /// session it carried has lost its connection.
    func linkClosed(_ link: ClientLink<Connection>) {
        if let session = registry.remove(link) { bus.publish(SessionDisconnected(session: session)) }
    }

    private func answer(_ item: InboundRequest, on link: ClientLink<Connection>) async {
        switch item {
        case .malformed(let error):
            log(.debug, "undecodable frame: \(error)", LogIDs(connection: String(link.id.rawValue)))
            link.reply(
                .error(id: error.requestId ?? 0, RtmError(error.errorCode, operation: error.messageType ?? "", reason: error.reason)))
        case .frame(let frame, let budgetTaken):
            await handle(frame, budgetTaken: budgetTaken, on: link)
        }
    }

    /// Carries out `frame` and counts it by operation, outcome and time taken (measured on the
    /// process's monotonic clock: a metric of real latency, not a timeout); a started one is
    /// counted when its answer is written.
    private func handle(_ frame: ClientFrame, budgetTaken: Bool, on link: ClientLink<Connection>) async {
        let started = ContinuousClock.now
        guard let succeeded = await carryOut(frame, budgetTaken: budgetTaken, on: link, startedAt: started) else { return }
        metrics.requestFinished(frame.type, succeeded: succeeded, after: ContinuousClock.now - started)
    }

    /// Carries out `frame` and answers it; returns whether it succeeded, or nil when it was
    /// started and is answered later.
    private func carryOut(
        _ frame: ClientFrame, budgetTaken: Bool, on link: ClientLink<Connection>, startedAt: ContinuousClock.Instant
    ) async -> Bool? {
        if case .session(.login(let login)) = frame.operation {
            let granted = await logIn(login, id: frame.id, on: link)
            if log.writes(.debug) {
                let caller = registry.caller(on: link) ?? Caller(app: login.appId, userId: login.userId, session: SessionID(0))
                logAnswer(frame, caller: caller, on: link, outcome: granted ? "login ok" : "login refused")
            }
            return granted
        }
        guard let caller = registry.caller(on: link) else {
            link.reply(.error(id: frame.id, RtmError(.notLogin, operation: frame.type, reason: "log in first")))
            return false
        }
        // Any request is a sign of life, not only heartbeats; tell the session at most once a second.
        if link.isDueForSignOfLife(now: clock.coarseNow), frame.operation != .session(.heartbeat) {
            _ = try? await bus.request(Heartbeat(caller: caller))
        }
        var budgetTaken = budgetTaken
        if case .channel(let operation) = frame.operation, case .publish = operation {
            // A publish may be started behind the link's earlier ones, up to the link's limit.
            await link.startedBelow(ClientLink<Connection>.maxStarted)
            do {
                if !budgetTaken { try takeBudget(ChannelBinding.self, operation, caller.app, link) }
                budgetTaken = true
                let outcome = try ChannelBinding.answerAtOnce(operation, caller: caller, bus: bus, admit: {}) {
                    startReply(frame, caller: caller, on: link, startedAt: startedAt, atOnce: false)
                }
                switch outcome {
                case .answered(let answer):
                    answered(frame, with: .success(answer), caller: caller, on: link)
                    return true
                case .started:
                    return nil
                case .mustWait:
                    break
                }
            } catch {
                answered(frame, with: .failure(error), caller: caller, on: link)
                return false
            }
        } else {
            // Anything else is carried out once every started request of the link is answered,
            // as if they had been carried out one at a time (a logout's close follows them).
            await link.startedBelow(1)
        }
        do {
            let answer: Answer
            switch frame.operation {
            case .session(let operation): answer = try await run(SessionBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            case .channel(let operation): answer = try await run(ChannelBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            case .storage(let operation): answer = try await run(StorageBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            case .extension(let operation): answer = try await run(ExtensionBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            case .stream(let operation): answer = try await run(StreamBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            case .presence(let operation): answer = try await run(PresenceBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            case .lock(let operation): answer = try await run(LockBinding.self, operation, caller, link, budgetTaken: budgetTaken)
            }
            link.reply(.answer(id: frame.id, answer))
            logAnswer(frame, caller: caller, on: link, error: nil)
            if case .session(.logout) = frame.operation { link.socket.close(code: .normalClosure, reason: "logged out") }
            switch frame.operation {
            case .channel(.publish(let channelType, _, _, _)): metrics.published(channelType)
            case .stream(.publishTopicMessage): metrics.published(.stream)
            default: break
            }
            return true
        } catch {
            link.reply(.error(id: frame.id, error))
            logAnswer(frame, caller: caller, on: link, error: error)
            return false
        }
    }

    /// Counts a request as started on `link` and returns where its answer goes: written to the
    /// client and counted, as if it had been answered at once (`atOnce`) or by the request loop.
    private func startReply(
        _ frame: ClientFrame, caller: Caller, on link: ClientLink<Connection>, startedAt: ContinuousClock.Instant, atOnce: Bool
    ) -> StartedReply {
        link.requestStarted()
        return { [self] result in
            answered(frame, with: result, caller: caller, on: link)
            // After the answer is written: a request waiting for the started ones is answered after it.
            link.startedAnswered()
            let succeeded = (try? result.get()) != nil
            if atOnce {
                metrics.answeredAtOnce(succeeded: succeeded)
            } else {
                metrics.requestFinished(frame.type, succeeded: succeeded, after: ContinuousClock.now - startedAt)
            }
        }
    }

    /// Writes the answer to a publish and logs and counts it.
    private func answered(_ frame: ClientFrame, with result: Result<Answer, RtmError>, caller: Caller, on link: ClientLink<Connection>) {
        switch result {
        case .success(let answer):
            link.reply(.answer(id: frame.id, answer))
            logAnswer(frame, caller: caller, on: link, error: nil)
            if case .channel(.publish(let channelType, _, _, _)) = frame.operation { metrics.published(channelType) }
        case .failure(let error):
            link.reply(.error(id: frame.id, error))
            logAnswer(frame, caller: caller, on: link, error: error)
        }
    }

    /// The debug line of an answered request, with the ids in play: the connection, the caller,
    /// the channel, and the request id (trace) the client sent.
    func logAnswer(_ frame: ClientFrame, caller: Caller, on link: ClientLink<Connection>, error: RtmError?) {
        logAnswer(
            frame, caller: caller, on: link,
            outcome: error.map { "\(frame.type) failed: \($0.code) (\($0.code.rawValue)): \($0.reason)" } ?? "\(frame.type) ok")
    }

    /// The debug line of an answered request, saying `outcome`.
    func logAnswer(_ frame: ClientFrame, caller: Caller, on link: ClientLink<Connection>, outcome: @autoclosure () -> String) {
        guard log.writes(.debug) else { return }
        var ids = LogIDs(caller)
        if caller.session.rawValue == 0 { ids.session = nil }
        ids.connection = String(link.id.rawValue)
        ids.channel = frame.operation.channelName
        ids.requestId = frame.trace
        log(.debug, outcome(), ids)
    }

    /// Takes the call's rate budget, then lets the feature's binding carry it out.
    private func run<Binding: FeatureBinding>(
        _ binding: Binding.Type, _ operation: Binding.Operation, _ caller: Caller, _ link: ClientLink<Connection>,
        budgetTaken: Bool
    ) async throws(RtmError) -> Answer {
        if !budgetTaken { try takeBudget(Binding.self, operation, caller.app, link) }
        do {
            return try await Binding.answer(operation, caller: caller, bus: bus)
        } catch where error.code == .serviceNotSupport && Binding.unavailable != nil {
            // The server runs no module for the feature: its own "not available" code.
            throw RtmError(Binding.unavailable ?? error.code, operation: error.operation, reason: error.reason)
        }
    }

    private func takeBudget<Binding: FeatureBinding>(
        _ binding: Binding.Type, _ operation: Binding.Operation, _ app: AppID, _ link: ClientLink<Connection>, now: Duration? = nil
    ) throws(RtmError) {
        if let budget = operation.rateBudget {
            try link.takeRateBudget(budget, app: app, now: now ?? clock.coarseNow, operation: operation.name)
        }
    }

    // MARK: At once

    /// Answers `frame` on the calling thread (the connection's event loop) when nothing of the
    /// link's waits before it, its session needs no sign of life, and the module answers the
    /// operation without suspending (`EventBus.handleImmediately`): no task, no actor hop. A
    /// publish its module starts instead (a user's message forwarded to another node,
    /// `EventBus.answerAtOnceOrStart`) is `.started`: answered when the module replies, while the
    /// link's next frames are answered meanwhile (the protocol lets answers come out of order).
    /// Returns `.mustWait` when the frame must go through the request loop, saying whether its
    /// rate budget was taken already (the module had to wait for this one after all).
    /// `budgetTaken` says the frame paid its budget already (offered in place first).
    func answerAtOnce(_ frame: ClientFrame, on link: ClientLink<Connection>, budgetTaken: Bool = false) -> AtOnceOutcome {
        // Only message-channel operations are answered at once today.
        guard case .channel(let operation) = frame.operation else { return .mustWait(budgetTaken: budgetTaken) }
        let now = clock.coarseNow
        guard let caller = link.callerAnsweringAtOnce(now: now) else { return .mustWait(budgetTaken: budgetTaken) }
        var budgetTaken = budgetTaken
        do throws(RtmError) {
            let outcome = try ChannelBinding.answerAtOnce(
                operation, caller: caller, bus: bus,
                admit: { () throws(RtmError) in
                    if !budgetTaken { try takeBudget(ChannelBinding.self, operation, caller.app, link, now: now) }
                    budgetTaken = true
                },
                orStart: { startReply(frame, caller: caller, on: link, startedAt: .now, atOnce: true) })
            switch outcome {
            case .answered(let answer):
                link.reply(.answer(id: frame.id, answer))
                logAnswer(frame, caller: caller, on: link, error: nil)
                if case .publish(let channelType, _, _, _) = operation { metrics.published(channelType) }
                metrics.answeredAtOnce(succeeded: true)
            case .started:
                return .started
            case .mustWait:
                return .mustWait(budgetTaken: budgetTaken)
            }
        } catch {
            link.reply(.error(id: frame.id, error))
            logAnswer(frame, caller: caller, on: link, error: error)
            metrics.answeredAtOnce(succeeded: false)
        }
        return .answered
    }
}

extension RequestDispatcher {
    /// Answers a publish read where the connection received it, as `answerAtOnce` answers a
    /// frame, when its module answers it in place (`PublishInPlace`): nothing of it is copied on
    /// the way to its receiver. `.mustWait` otherwise, saying whether its rate budget was taken:
    /// it then goes on as its owned frame (`view.frame`), through `answerAtOnce` first.
    func answerInPlace(_ view: PublishView, on link: ClientLink<Connection>) -> AtOnceOutcome {
        guard ChannelBinding.answersInPlace(bus: bus) else { return .mustWait(budgetTaken: false) }
        let clocks = link.withRead { $0.clocks(from: clock) }
        guard
            let (caller, refusal) = link.callerAnsweringAtOnce(
                now: clocks.now, taking: PublishView.rateBudget, operation: PublishView.operationName)
        else { return .mustWait(budgetTaken: false) }
        do throws(RtmError) {
            if let refusal { throw refusal }
            let answered = try link.withReceiverMemo { (memo) throws(RtmError) in
                try ChannelBinding.answerInPlace(view, caller: caller, receivedAt: clocks.wallMilliseconds, receiverMemo: memo, bus: bus)
            }
            guard let answer = answered else { return .mustWait(budgetTaken: true) }
            link.reply(.answer(id: view.id, answer))
            if log.writes(.debug) { logAnswer(view.frame, caller: caller, on: link, error: nil) }
            link.withRead { $0.accepted(view.channelType) }
        } catch {
            link.reply(.error(id: view.id, error))
            logAnswer(view.frame, caller: caller, on: link, error: error)
            link.withRead { $0.refused += 1 }
        }
        return .answered
    }

    /// The frames of one read from `link`'s socket were all handed over: counts the publishes they
    /// had answered at once and lets the next read read the clocks again.
    func readEnded(on link: ClientLink<Connection>) {
        let read = link.withRead { share in
            defer { share = ClientLink<Connection>.ReadShare() }
            return share
        }
        metrics.answeredAtOnce(accepted: read.accepted, refused: read.refused)
    }
}

/// What became of a frame offered to `RequestDispatcher.answerAtOnce`.
enum AtOnceOutcome: Equatable {
    /// Answered.
    case answered
    /// Started: answered when its module replies.
    case started
    /// Not answered: it goes through the request loop; `budgetTaken` when its rate budget was
    /// taken already.
    case mustWait(budgetTaken: Bool)
}

/// How a feature's client operations become bus requests: its half of the open edge.
protocol FeatureBinding {
    /// The feature's operations, as `SwitchboardWire` decodes them.
    associatedtype Operation: NamedOperation
    /// The reference's code for the feature when the server runs no module for it (the bus's
    /// `serviceNotSupport` otherwise).
    static var unavailable: RtmErrorCode? { get }
    /// Carries out `operation` for `caller` through bus requests and returns its answer.
    static func answer(_ operation: Operation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer
    /// Carries out `operation` without suspending when its module answers it so, or starts it
    /// when its module replies later (`EventBus.answerAtOnceOrStart`; the answer goes to the
    /// reply `makeReply` makes), calling `admit` (the rate budget) first; `.mustWait`, having
    /// called nothing, when it can do neither.
    static func answerAtOnce(
        _ operation: Operation, caller: Caller, bus: EventBus, admit: () throws(RtmError) -> Void,
        orStart makeReply: () -> StartedReply
    ) throws(RtmError) -> ImmediateOutcome<Answer>
}

/// Where the answer of a started request goes: called once, on any thread.
typealias StartedReply = @Sendable (Result<Answer, RtmError>) -> Void

extension FeatureBinding {
    static var unavailable: RtmErrorCode? { nil }

    static func answerAtOnce(
        _ operation: Operation, caller: Caller, bus: EventBus, admit: () throws(RtmError) -> Void,
        orStart makeReply: () -> StartedReply
    ) throws(RtmError) -> ImmediateOutcome<Answer> {
        .mustWait
    }
}
