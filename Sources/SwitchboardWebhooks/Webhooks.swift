import SwitchboardCore
import SwitchboardCryptography

/// The webhooks module: tells an app's backend what happens, by signed HTTP `POST`s that leave
/// through a durable queue.
///
/// It listens on the bus only (sessions, channel membership, presence states, metadata, locks,
/// messages to offline users) and never answers a client's request, so nothing on a message's
/// path waits for it: the events reach its mailbox like any subscriber's. Each event becomes one
/// delivery per receiver, written to the `WebhookQueue` (durable on disk) before it is sent;
/// deliveries to a receiver go one at a time in queue order (`DeliveryLines`), are retried with
/// backoff and jitter for the retry window, and are removed once taken or given up. It answers
/// `WebhookStatistics` for `/metrics`.
public actor Webhooks: OpeningModule {
    public nonisolated let name = "webhooks"

    /// What the module was configured with at its start.
    public nonisolated let configuration: WebhookConfiguration
    /// The configuration in force: `configuration` with the receivers and secret of the last
    /// `replaceReceivers`.
    private var inForce: WebhookConfiguration
    /// Where deliveries wait until a receiver takes them.
    public nonisolated let queue: any WebhookQueue
    private let poster: any WebhookPoster

    private enum State {
        case idle
        case running(ModuleContext, members: ChannelMembership)
    }
    private var state = State.idle
    private var opened = false

    /// Who is online, for `user.online` and `user.offline`.
    private var users = UserSessions()
    private var lines: DeliveryLines
    /// Made, not yet on disk: sent once written.
    private var staged: [QueuedDelivery] = []
    /// Deliveries a queue write is writing now: no longer staged, not yet lined up; they count
    /// against the queue's bound as both do.
    private var writing = 0
    /// Taken or given up, not yet removed from the disk.
    private var removals: [Int64] = []
    private var nextSequence: Int64 = 1
    /// The queue was handed deliveries of another node (or may have been, before the start): the
    /// writer takes them over before its next write.
    private var adoptionDue = false
    private var attempts: [String: Task<Void, Never>] = [:]
    private var counts = WebhookCounts()
    private var latency = DurationHistogram()
    private var overflowing = false

    /// Event ids: this run's random prefix and a counter, unique across restarts and nodes.
    private let idPrefix: String
    private var eventCounter: UInt64 = 0
    /// Wakes the writer in `run()` when something is staged or removed.
    private let writes = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    /// The module for `configuration`, queueing in `queue` and posting through `poster`.
    public init(configuration: WebhookConfiguration, queue: any WebhookQueue, poster: any WebhookPoster) {
        self.configuration = configuration
        inForce = configuration
        self.queue = queue
        self.poster = poster
        lines = DeliveryLines(retryWindow: configuration.retryWindow, backoff: configuration.backoff)
        idPrefix = Hex.lowercase(CryptoPrimitives.randomBytes(count: 8))
    }

    public func start(_ context: ModuleContext) async {
        let members = ChannelMembership()
        state = .running(context, members: members)
        context.bus.subscription()
            .keepingMembership(members) { [self] update in await membershipChanged(update, members) }
            .on(SessionOpened.self) { [self] event in await sessionOpened(event.caller) }
            .on(UserOnlineAcrossNodes.self) { [self] event in await record([WebhookDrafts.acrossNodes(event)]) }
            .on(DeadNodeSessionsEnded.self) { [self] event in await record(WebhookDrafts.deadNode(event)) }
            .on(PresenceStateChanged.self) { [self] event in await record([WebhookDrafts.state(event)]) }
            .on(MetadataChanged.self) { [self] event in await record([WebhookDrafts.metadata(event)]) }
            .on(LockChanged.self) { [self] event in await record(WebhookDrafts.lock(event).map { [$0] } ?? []) }
            .on(UserMessageUndelivered.self) { [self] event in
                await record([WebhookDrafts.undelivered(event, content: configuration.messageContent)])
            }
        context.bus.handle(WebhookStatistics.self) { [self] _ in await statistics() }
        context.bus.handle(ReplaceWebhookReceivers.self) { [self] request in
            await replaceReceivers(everyApp: request.everyApp, perApp: request.perApp, secret: request.secret)
        }
    }

    /// Puts new receivers and a new secret in force: events from now on go to them. A receiver
    /// already configured keeps its own secret and event types. The deliveries waiting for a
    /// receiver no longer configured (the one in flight included, whatever its answer) are given
    /// up and counted as dropped, as `open()` does at a start; so are those being written now.
    @discardableResult
    public func replaceReceivers(everyApp: [String], perApp: [AppID: [String]], secret: [UInt8]) -> WebhookReceiversReplaced {
        let known = Dictionary((inForce.targets + inForce.appTargets.values.flatMap { $0 }).map { ($0.url, $0) }) { first, _ in first }
        func target(_ url: String) -> WebhookTarget { known[url] ?? WebhookTarget(url: url) }
        inForce.targets = everyApp.map(target)
        inForce.appTargets = perApp.mapValues { $0.map(target) }.filter { !$0.value.isEmpty }
        inForce.secret = secret
        let receivers = inForce.receiverURLs
        var givenUp: [Int64] = []
        for target in lines.targets where !receivers.contains(target) {
            givenUp += lines.removeLine(target).map(\.sequence)
            attempts[target] = nil
        }
        giveUp(givenUp)
        log(.info, "receivers in force: \(inForce.targets.count) for every app, \(inForce.appTargets.count) apps with their own")
        return WebhookReceiversReplaced(givenUp: givenUp.count)
    }

    /// Counts `sequences`, waiting for receivers no longer configured, as dropped and removes them.
    private func giveUp(_ sequences: [Int64]) {
        guard !sequences.isEmpty else { return }
        counts.dropped += UInt64(sequences.count)
        removals += sequences
        log(.warning, "\(sequences.count) queued deliveries to receivers no longer configured were given up")
        writes.continuation.yield()
    }

    /// Opens the queue and lines up what waited in it; deliveries to a receiver no longer
    /// configured are given up.
    public func open() async throws {
        let waiting = try await queue.open()
        let known = inForce.receiverURLs
        var forgotten: [Int64] = []
        for delivery in waiting {
            nextSequence = max(nextSequence, delivery.sequence + 1)
            if known.contains(delivery.target) {
                lines.add(delivery)
            } else {
                forgotten.append(delivery.sequence)
            }
        }
        giveUp(forgotten)
        if !waiting.isEmpty { log(.info, "\(waiting.count - forgotten.count) deliveries waited in the queue") }
        opened = true
        adoptionDue = true
        writes.continuation.yield()
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await _ in writes.stream { await writeStaged() }
            }
            if let adoptions = queue.adoptions {
                group.addTask { [self] in
                    for await _ in adoptions { await adoptionArrived() }
                }
            }
            group.addTask { [self] in
                for await _ in context.clock.ticks(every: configuration.tickInterval) { await dispatch() }
                writes.continuation.finish()
            }
            await group.waitForAll()
        }
        for attempt in attempts.values { attempt.cancel() }
        attempts.removeAll()
        await poster.shutdown()
        await queue.close()
    }

    // MARK: Events

    private func sessionOpened(_ caller: Caller) {
        guard !usersAcrossNodes, users.open(caller) else { return }
        record([WebhookDrafts.online(caller.user)])
    }

    /// Whether a relay (the cluster link) tells when users come online on the first node and go
    /// offline on the last (`UserOnlineAcrossNodes`): then a node's own first and last sessions
    /// of a user are no event, so a user on two nodes comes online once for the cluster.
    private var usersAcrossNodes: Bool {
        guard case .running(let context, _) = state else { return false }
        return context.bus.hasHandler(OpenRelay.self)
    }

    private func membershipChanged(_ update: MembershipUpdate, _ members: ChannelMembership) {
        switch update {
        case .changed(let change):
            record(drafts(change, members))
        case .sessionEnded(let event, _) where event.reason == .movedToAnotherNode:
            // The session goes on on another node: nobody left anything.
            _ = users.close(event.caller)
        case .sessionEnded(let event, let left):
            // The channels first, then the user: a receiver hears the leaves before the user goes offline.
            let offline = !usersAcrossNodes && users.close(event.caller)
            record(left.flatMap { drafts($0, members) } + (offline ? [WebhookDrafts.offline(event.caller.user, reason: event.reason)] : []))
        }
    }

    private func drafts(_ change: MembershipChange, _ members: ChannelMembership) -> [WebhookDraft] {
        let (empty, count) = members.read { ($0.isEmpty(change.channel), $0.memberCount(of: change.channel)) }
        return WebhookDrafts.membership(change, channelEmpty: empty, firstMember: count == 1)
    }

    /// Makes each draft an event and stages one delivery per receiver that wants it.
    private func record(_ drafts: [WebhookDraft]) {
        guard !drafts.isEmpty, case .running(let context, _) = state else { return }
        for draft in drafts {
            let receivers = inForce.targets(of: draft.app).filter { $0.events?.contains(draft.type) ?? true }
            guard !receivers.isEmpty else { continue }
            eventCounter += 1
            let event = WebhookEvent(
                id: "\(idPrefix)-\(eventCounter)", type: draft.type, app: draft.app, time: context.clock.wallNow, fields: draft.fields)
            let body = event.body
            for receiver in receivers {
                guard lines.count + writing + staged.count < configuration.maxQueued else {
                    counts.dropped += 1
                    if !overflowing { log(.warning, "the webhook queue is full (\(configuration.maxQueued)): new events are dropped") }
                    overflowing = true
                    continue
                }
                overflowing = false
                staged.append(
                    QueuedDelivery(sequence: nextSequence, eventId: event.id, target: receiver.url, body: body, created: event.time))
                nextSequence += 1
                counts.enqueued += 1
            }
        }
        writes.continuation.yield()
    }

    // MARK: The queue

    private func adoptionArrived() {
        adoptionDue = true
        writes.continuation.yield()
    }

    /// Takes over the deliveries the queue was handed (a dead node's): numbered after this
    /// module's own, kept in the queue, then lined up like any written delivery. In the writer's
    /// task, so no write runs meanwhile; what fails is tried again at the next write.
    private func adoptHanded() async {
        adoptionDue = false
        let handed: [QueuedDelivery]
        do {
            handed = try await queue.adopted()
        } catch {
            adoptionDue = true
            log(.error, "the deliveries handed over by another node could not be read: \(error)")
            return
        }
        guard !handed.isEmpty else { return }
        let renumbered = handed.map { delivery in
            var delivery = delivery
            delivery.sequence = nextSequence
            nextSequence += 1
            return delivery
        }
        do {
            try await queue.keepAdopted(renumbered)
        } catch {
            adoptionDue = true
            log(.error, "the deliveries handed over by another node could not be kept: \(error)")
            return
        }
        counts.enqueued += UInt64(renumbered.count)
        let known = inForce.receiverURLs
        for delivery in renumbered where known.contains(delivery.target) { lines.add(delivery) }
        giveUp(renumbered.filter { !known.contains($0.target) }.map(\.sequence))
        log(.info, "took over \(renumbered.count) deliveries another node's queue left")
        dispatch()
    }

    /// Writes what is staged and removed, then lines up the new deliveries and sends what is due.
    private func writeStaged() async {
        if opened && adoptionDue { await adoptHanded() }
        while opened && (!staged.isEmpty || !removals.isEmpty) {
            let adding = staged, removing = removals
            staged = []
            removals = []
            writing = adding.count
            do {
                try await queue.write(adding: adding, removing: removing)
            } catch {
                // Sent anyway (at most once, this time): holding them would stop every receiver.
                log(.error, "the webhook queue could not be written, \(adding.count) deliveries are not durable: \(error)")
            }
            writing = 0
            // Receivers replaced during the write no longer take theirs.
            let known = inForce.receiverURLs
            for delivery in adding where known.contains(delivery.target) { lines.add(delivery) }
            giveUp(adding.filter { !known.contains($0.target) }.map(\.sequence))
            dispatch()
        }
    }

    /// Starts an attempt for each receiver whose oldest delivery is due.
    private func dispatch() {
        guard opened, case .running(let context, _) = state else { return }
        for delivery in lines.due(now: context.clock.wallNow) {
            let timestamp = context.clock.wallNow.secondsSince1970
            let secret = inForce.secret(for: delivery.target)
            let request = WebhookRequest(
                url: delivery.target,
                headers: [
                    WebhookHeader("Content-Type", "application/json"),
                    WebhookHeader("User-Agent", "Switchboard-Webhooks"),
                    WebhookHeader("X-Switchboard-Event-Id", delivery.eventId),
                    WebhookHeader("X-Switchboard-Timestamp", "\(timestamp)"),
                    WebhookHeader("X-Switchboard-Signature", WebhookSignature.header(secret: secret, timestamp: timestamp, body: delivery.body)),
                ],
                body: delivery.body, timeout: configuration.attemptTimeout)
            let poster = poster
            attempts[delivery.target] = Task { [self] in
                let outcome = await poster.post(request)
                finished(delivery, outcome)
            }
        }
    }

    private func finished(_ delivery: QueuedDelivery, _ outcome: WebhookPostOutcome) {
        // A receiver taken away while the attempt ran: its deliveries were given up and counted.
        guard lines.sequenceInFlight(to: delivery.target) == delivery.sequence else { return }
        attempts[delivery.target] = nil
        guard case .running(let context, _) = state else { return }
        let now = context.clock.wallNow
        if outcome.isAccepted {
            lines.succeeded(delivery.target)
            counts.sent += 1
            latency.observe(now - delivery.created)
            removals.append(delivery.sequence)
            writes.continuation.yield()
        } else {
            counts.failed += 1
            switch lines.failed(delivery.target, now: now, jitter: configuration.random()) {
            case .dropped(let given)?:
                counts.dropped += 1
                removals.append(given.sequence)
                writes.continuation.yield()
                log(.warning, "gave up \(given.eventId) to \(given.target) after \(configuration.retryWindow): \(Self.describe(outcome))")
            case .retry(let next)?:
                log(.debug, "\(delivery.eventId) to \(delivery.target): \(Self.describe(outcome)); next attempt in \(next - now)")
            case nil:
                break
            }
        }
        dispatch()
    }

    private func statistics() -> WebhookCounts {
        var answer = counts
        answer.queued = lines.count + writing + staged.count
        answer.latency = latency.snapshot
        return answer
    }

    private static func describe(_ outcome: WebhookPostOutcome) -> String {
        switch outcome {
        case .answered(let status): "HTTP \(status)"
        case .failed(let reason): reason
        }
    }

    private func log(_ level: SwitchboardLog.Level, _ message: @autoclosure () -> String) {
        guard case .running(let context, _) = state else { return }
        context.log(level, message())
    }
}
