import SwitchboardTransport

/// A subscriber's state on its loop: the channels asked for, those the current connection has
/// confirmed, the calls waiting for confirmations, and the link check. Loop only.
final class SubscriberState {
    /// A `subscribe` call waiting for the confirmation of each of its channels.
    private final class Waiter {
        var remaining: Set<RedisChannel>
        var timer: LoopTimer?
        let complete: (Result<Void, RedisError>) -> Void

        init(remaining: Set<RedisChannel>, complete: @escaping (Result<Void, RedisError>) -> Void) {
            self.remaining = remaining
            self.complete = complete
        }
    }

    private let link: RedisLink
    private let handler: @Sendable (RedisSubscriberEvent) -> Void
    private var loop: EventLoop { link.loop }
    private var configuration: RedisConfiguration { link.configuration }
    /// The channels asked for.
    private var wanted: Set<RedisChannel> = []
    /// The channels the current connection has confirmed.
    private var confirmed: Set<RedisChannel> = []
    private var waiters: [Waiter] = []
    /// After a reconnection: the channels still to be confirmed before `linkRestored`, and the
    /// gap it reports.
    private var restoring: (remaining: Set<RedisChannel>, gap: [RedisChannel])?
    /// When the unanswered link check was sent.
    private var pingSent: ContinuousClock.Instant?
    private var healthTimer: LoopTimer?

    init(link: RedisLink, handler: @escaping @Sendable (RedisSubscriberEvent) -> Void) {
        self.link = link
        self.handler = handler
    }

    /// Makes the first connection: `first` hears whether it came up; `connected` every change.
    func start(connected: @escaping (Bool) -> Void, first: @escaping (Result<Void, RedisError>) -> Void) {
        var everReady = false
        link.prepare = { [unowned self] wire in
            wire.unmatchedRepliesArePushes = true
            wire.onPush = { [weak self] in self?.received($0) }
        }
        link.onReady = { [unowned self] wire, reconnected in
            everReady = true
            connected(true)
            first(.success(()))
            linkReady(wire, reconnected: reconnected)
        }
        link.onFailure = { [unowned self] error, wasReady in
            connected(false)
            guard everReady else {
                link.close()
                first(.failure(error.asConnectFailure))
                return
            }
            if wasReady { linkLost(error) }
        }
        link.start()
    }

    func close() {
        link.close()
        stopHealthChecks()
        failWaiters(.closed)
        restoring = nil
    }

    // MARK: Subscriptions

    func subscribe(_ channels: [RedisChannel], complete: @escaping (Result<Void, RedisError>) -> Void) {
        guard !link.isClosed else { return complete(.failure(.closed)) }
        wanted.formUnion(channels)
        guard let wire = link.readyWire else { return complete(.failure(.unavailable(link.downReason))) }
        // Each channel looked up in `confirmed`, not `confirmed` walked: a node subscribed to tens
        // of thousands of channels pays for the new ones only (`subtracting` cost a subscribe
        // O(confirmed), 42 % of a node's CPU while 6,000 clients logged in).
        let fresh = Set(channels.lazy.filter { !self.confirmed.contains($0) })
        guard !fresh.isEmpty else { return complete(.success(())) }
        let waiter = Waiter(remaining: fresh, complete: complete)
        waiters.append(waiter)
        waiter.timer = loop.scheduleTimer(after: configuration.commandTimeout) { [weak self, weak waiter, weak wire] in
            guard let self, let waiter, let index = waiters.firstIndex(where: { $0 === waiter }) else { return }
            waiters.remove(at: index)
            waiter.complete(.failure(.timedOut))
            wire?.close(.connectionLost("closed after a subscription was not confirmed in time"))
        }
        send(.subscribe, fresh, on: wire)
    }

    func unsubscribe(_ channels: [RedisChannel]) {
        let gone = Set(channels)
        wanted.subtract(gone)
        confirmed.subtract(gone)
        if let wire = link.readyWire { send(.unsubscribe, gone, on: wire) }
        for waiter in waiters { waiter.remaining.subtract(gone) }
        completeSatisfiedWaiters()
        if var restoring {
            restoring.remaining.subtract(gone)
            restoring.gap.removeAll { gone.contains($0) }
            self.restoring = restoring
            finishRestoringIfDone()
        }
    }

    private enum Direction { case subscribe, unsubscribe }

    /// Writes `SUBSCRIBE` for the plain channels (one command) and `SSUBSCRIBE` for each shard
    /// channel (one each: a cluster takes shard channels of one slot per command), or the
    /// unsubscribing forms.
    private func send(_ direction: Direction, _ channels: Set<RedisChannel>, on wire: RedisWire) {
        let plain = channels.filter { !$0.sharded }.map(\.name)
        let verb = direction == .subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE"
        var bytes: [UInt8] = []
        if !plain.isEmpty { RESPCommand.encode([Array(verb.utf8)] + plain, into: &bytes) }
        for channel in channels where channel.sharded {
            RESPCommand.encode([Array(("S" + verb).utf8), channel.name], into: &bytes)
        }
        if !bytes.isEmpty { wire.write(bytes) }
    }

    // MARK: The link

    private func linkReady(_ wire: RedisWire, reconnected: Bool) {
        confirmed = []
        pingSent = nil
        if reconnected {
            let gap = wanted.sorted { $0.description < $1.description }
            restoring = (Set(wanted), gap)
        }
        if !wanted.isEmpty { send(.subscribe, wanted, on: wire) }
        finishRestoringIfDone()
        startHealthChecks(on: wire)
    }

    private func linkLost(_ error: RedisError) {
        stopHealthChecks()
        confirmed = []
        restoring = nil
        failWaiters(.connectionLost("\(error)"))
        handler(.linkLost(error))
    }

    private func finishRestoringIfDone() {
        guard let restoring, restoring.remaining.isEmpty else { return }
        self.restoring = nil
        handler(.linkRestored(gap: restoring.gap))
    }

    private func failWaiters(_ error: RedisError) {
        let failed = waiters
        waiters = []
        for waiter in failed {
            if let timer = waiter.timer { loop.cancel(timer) }
            waiter.complete(.failure(error))
        }
    }

    private func completeSatisfiedWaiters() {
        let done = waiters.filter { $0.remaining.isEmpty }
        guard !done.isEmpty else { return }
        waiters.removeAll { $0.remaining.isEmpty }
        for waiter in done {
            if let timer = waiter.timer { loop.cancel(timer) }
            waiter.complete(.success(()))
        }
    }

    // MARK: Pushes

    /// A push (RESP3) or a reply no call waits for (RESP2 in subscribed mode).
    private func received(_ value: RESPValue) {
        if case .simpleString(let text) = value, text.uppercased() == "PONG" {
            pingSent = nil
            return
        }
        guard let parts = value.elements, let kind = parts.first?.string?.lowercased() else { return }
        switch kind {
        case "message", "smessage":
            guard parts.count == 3, case .bulkString(let name) = parts[1], case .bulkString(let payload) = parts[2] else {
                return
            }
            let channel = RedisChannel(bytes: name, sharded: kind == "smessage")
            guard wanted.contains(channel) else { return }
            handler(.message(RedisMessage(channel: channel, payload: payload)))
        case "subscribe", "ssubscribe":
            guard parts.count >= 2, case .bulkString(let name) = parts[1] else { return }
            confirm(RedisChannel(bytes: name, sharded: kind == "ssubscribe"))
        case "pong":
            pingSent = nil
        default:
            break
        }
    }

    private func confirm(_ channel: RedisChannel) {
        guard wanted.contains(channel) else { return }
        confirmed.insert(channel)
        for waiter in waiters { waiter.remaining.remove(channel) }
        completeSatisfiedWaiters()
        if var restoring {
            restoring.remaining.remove(channel)
            self.restoring = restoring
            finishRestoringIfDone()
        }
    }

    // MARK: Link checks

    private func startHealthChecks(on wire: RedisWire) {
        stopHealthChecks()
        healthTimer = loop.scheduleTimer(after: configuration.healthCheckInterval) { [weak self, weak wire] in
            guard let self, let wire, !wire.isClosed else { return }
            healthTimer = nil
            if let pingSent {
                guard ContinuousClock.now - pingSent < configuration.commandTimeout else {
                    wire.close(.connectionLost("no answer to a link check within \(configuration.commandTimeout)"))
                    return
                }
            } else {
                pingSent = .now
                wire.write(RESPCommand.encode(["PING"]))
            }
            startHealthChecks(on: wire)
        }
    }

    private func stopHealthChecks() {
        if let healthTimer { loop.cancel(healthTimer) }
        healthTimer = nil
    }
}
