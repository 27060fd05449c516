import SwitchboardCore

/// The topic-router module: stream channels, their topics, topic publishers and per-publisher
/// topic subscriptions, each app on its own.
///
/// It answers `JoinStreamChannel`, `LeaveStreamChannel`, `RenewStreamChannelToken`, `JoinTopic`,
/// `LeaveTopic`, `PublishTopicMessage`, `SubscribeTopic` and `UnsubscribeTopic`; it asks
/// `VerifyChannelJoinToken` when a handler exists; it publishes `ChannelJoined` and `ChannelLeft`
/// for stream channels; it drops a finished session's channels on `SessionClosed`. Topic messages
/// go out as `Push.message` with channel type stream, topic events as `Push.topic`.
///
/// The state lives in a `TopicStore`, called one operation at a time (`OneAtATime`), so what an
/// operation changed is announced before the next one reads; who is in which stream channel of
/// this node's sessions (whom a topic event goes to) is kept beside it in a `ChannelRoster`.
///
/// Over a store that publishes its changes (shared by the nodes of a cluster), the router tells
/// its members the topic changes the relay brings (`DeliverRelayedTopics`), its own node's
/// included, instead of what each call returns, and hands each topic message it accepts to the
/// store for the other nodes' subscribers (`TopicRouter+Relay.swift`).
public actor TopicRouter: OpeningModule {
    public nonisolated let name = "topic-router"
    /// How often `run()` forgets idle per-topic rate windows.
    public nonisolated let sweepInterval: Duration

    enum State {
        case idle
        case running(ModuleContext, ended: EndedSessions)
    }
    var state = State.idle
    /// Where the stream channels and topics live.
    public nonisolated let store: any TopicStore
    let turns = OneAtATime()
    /// The write-back of what a shared store lost, while one runs (`restoreShare`).
    private var restoring: Task<Void, Never>?
    /// The members of the stream channels, as the store's answers report them.
    var members = ChannelRoster()
    /// Over a publishing store with a relay: per channel, this node's members, each with the
    /// number of the last change its snapshot showed (nil while the snapshot is on its way). A
    /// relayed change is told to those whose number is below its own.
    var floors: [ChannelKey: [SessionID: UInt64?]] = [:]
    private var rates = TopicRateWindows(limit: nil)
    private var tokenExpiries = JoinTokenExpiries()

    /// Creates the module over `store` (in memory by default).
    public init(store: any TopicStore = InMemoryTopicStore(), sweepInterval: Duration = .seconds(1)) {
        self.store = store
        self.sweepInterval = sweepInterval
    }

    public func start(_ context: ModuleContext) async {
        let ended = context.onSessionEnd { [self] event in await sessionClosed(event) }
        state = .running(context, ended: ended)
        let bus = context.bus
        // A session another node held is this node's now: its stream channels there end (the
        // topics are not moved; its client joins again), before its login is answered.
        bus.subscription()
            .on(SessionTakenOver.self) { [self] event in await takenOver(event) }
            .on(SharedStoreReconnected.self) { [self] _ in await startRestoring() }
        bus.handle(JoinStreamChannel.self) { [self] request throws(RtmError) in try await join(request) }
        bus.handle(LeaveStreamChannel.self) { [self] request throws(RtmError) in try await leave(request) }
        bus.handle(RenewStreamChannelToken.self) { [self] request throws(RtmError) in try await renew(request) }
        bus.handle(JoinTopic.self) { [self] request throws(RtmError) in try await joinTopic(request) }
        bus.handle(LeaveTopic.self) { [self] request throws(RtmError) in try await leaveTopic(request) }
        bus.handle(PublishTopicMessage.self) { [self] request throws(RtmError) in try await publish(request) }
        bus.handle(SubscribeTopic.self) { [self] request throws(RtmError) in try await subscribe(request) }
        bus.handle(UnsubscribeTopic.self) { [self] request throws(RtmError) in try await unsubscribe(request) }
        bus.handle(DeliverRelayedTopics.self) { [self] request in
            await relayed(request)
            return Done()
        }
    }

    private func takenOver(_ event: SessionTakenOver) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                try await store.endTakenOver(event.caller.session, fromNode: event.formerNode)
            }
        } catch {
            context.log(.warning, "the stream channels \(event.caller) had on node \(event.formerNode) end when it is reaped: \(error)")
        }
    }

    /// Starts `restoreShare` in a task of its own, so the events after it go on while it waits
    /// for the store; one still waiting from an earlier loss gives way (each writes back all that
    /// is missing, one turn at a time).
    private func startRestoring() {
        restoring?.cancel()
        restoring = Task { await restoreShare() }
    }

    /// The shared store's link came back and it may have lost everything: the store writes back
    /// this node's memberships and publishers (the members are told of the topics by the relay),
    /// retried while the store's own connection comes back (up to 30 s).
    private func restoreShare() async {
        guard case .running(let context, _) = state else { return }
        do {
            let restored = try await RealTimeRetry.run(attempts: 150, pause: .milliseconds(200)) { () async throws(RtmError) in
                try await turns.run { () async throws(RtmError) in try await store.restore() }
            }
            if restored > 0 { context.log(.warning, "wrote back \(restored) stream channel memberships the topic store had lost") }
        } catch {
            context.log(.warning, "the stream channel memberships the topic store lost are not written back: \(error)")
        }
    }

    /// Opens the store (a shared one connects); throws what it throws.
    public func open() async throws {
        try await store.open()
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        for await now in context.clock.ticks(every: sweepInterval) {
            rates.dropIdle(now: now)
            warnOfExpiringTokens(context)
        }
        restoring?.cancel()
        await store.close()
    }

    /// Tells each member whose join token runs out within 30 s, once per token, naming the channel.
    private func warnOfExpiringTokens(_ context: ModuleContext) {
        let now = context.clock.wallMilliseconds / 1000
        for due in tokenExpiries.due(now: now, warning: Self.tokenWarningSeconds) {
            context.outbox.deliver(
                .session(.tokenPrivilegeWillExpire(secondsLeft: due.secondsLeft, channel: due.channel.name)), to: [due.session])
        }
    }

    /// How long before a join token runs out its member is told, as for the login token.
    static let tokenWarningSeconds: UInt64 = 30

    // MARK: Channels

    private func join(_ request: JoinStreamChannel) async throws(RtmError) -> Done {
        let operation = JoinStreamChannel.operation
        let (context, ended) = try running(operation)
        let caller = request.caller
        let channel = try streamChannel(request.channelName, of: caller, context, operation)
        guard !members.contains(caller.session, in: channel) else {
            throw RtmError(.duplicateOperation, operation: operation, reason: "already joined \(request.channelName)")
        }
        let grant = try await verifyToken(request.token, for: caller, channel: request.channelName, context, operation)
        return try await turns.run { () async throws(RtmError) in
            // In the turn: either this sees the session's end, or the end's cleanup runs after it.
            guard !ended.contains(caller.session) else {
                throw RtmError(.notLogin, operation: operation, reason: "the session has ended")
            }
            var topics = try await store.join(
                StreamMember(caller: caller, features: request.features), to: channel, limits: context.limits(for: caller.app))
            let features = ChannelFeatures(request.features)
            members.join(caller, channel, features: features)
            tokenExpiries.granted(caller.session, channel, until: grant?.expiresAt)
            context.bus.publish(ChannelJoined(caller: caller, channel: channel, features: features))
            if isRelayed { topics = try await startRelaying(to: caller, in: channel, context) }
            let snapshot = TopicEvent(
                type: .snapshot, channelName: channel.name, publisher: caller.userId, topicInfos: [],
                timestamp: context.clock.wallMilliseconds)
            for part in TopicParts.snapshot(topics, as: snapshot) {
                context.outbox.deliver(.topic(part), to: [caller.session])
            }
            return Done()
        }
    }

    private func leave(_ request: LeaveStreamChannel) async throws(RtmError) -> Done {
        let operation = LeaveStreamChannel.operation
        let (context, _) = try running(operation)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        return try await turns.run { () async throws(RtmError) in
            guard let departure = try await store.leave(request.caller.session, from: channel) else {
                throw RtmError(.channelNotJoined, operation: operation, reason: "stream channel \(request.channelName) is not joined")
            }
            departed(departure, reason: .left, context)
            return Done()
        }
    }

    private func renew(_ request: RenewStreamChannelToken) async throws(RtmError) -> Done {
        let operation = RenewStreamChannelToken.operation
        let (context, _) = try running(operation)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        guard members.contains(request.caller.session, in: channel) else {
            throw RtmError(.channelNotJoined, operation: operation, reason: "stream channel \(request.channelName) is not joined")
        }
        let grant = try await verifyToken(request.token, for: request.caller, channel: request.channelName, context, operation)
        // Still a member after the check suspended this actor: the renewed token is watched instead.
        if members.contains(request.caller.session, in: channel) {
            tokenExpiries.granted(request.caller.session, channel, until: grant?.expiresAt)
        }
        return Done()
    }

    private func sessionClosed(_ event: SessionClosed) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                for departure in try await store.leaveAll(event.session) {
                    departed(departure, reason: .sessionClosed(event.reason), context)
                }
            }
        } catch {
            context.log(.error, "cannot take \(event.caller) out of its stream channels: \(error)")
        }
        tokenExpiries.ended(event.session)
        for channel in floors.keys { stopRelaying(to: event.session, in: channel) }
    }

    /// Tells the remaining members which topics the leaver published in (over a relay, the relay
    /// tells them), then the bus that it left.
    func departed(_ departure: StreamDeparture, reason: ChannelLeaveReason, _ context: ModuleContext) {
        members.leave(departure.caller, departure.channel, reason: reason)
        tokenExpiries.left(departure.caller.session, departure.channel)
        stopRelaying(to: departure.caller.session, in: departure.channel)
        if !departure.topics.isEmpty && !isRelayed {
            announce(.remoteLeaveTopic, departure.topics, by: departure.caller, in: departure.channel, context)
        }
        context.bus.publish(ChannelLeft(caller: departure.caller, channel: departure.channel, reason: reason))
    }

    // MARK: Topics

    private func joinTopic(_ request: JoinTopic) async throws(RtmError) -> Done {
        let operation = JoinTopic.operation
        let (context, _) = try running(operation)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        let limits = context.limits(for: request.caller.app)
        try TopicValidation.checkTopic(request.topic, limits: limits, operation: operation)
        try TopicValidation.checkMeta(request.options.meta, limits: limits, operation: operation)
        return try await turns.run { () async throws(RtmError) in
            let publisher = try await store.joinTopic(
                request.caller.session, request.topic, in: channel, options: request.options, limits: limits,
                operation: operation)
            if !isRelayed {
                announce(.remoteJoinTopic, [TopicInfo(topic: request.topic, publishers: [publisher])], by: request.caller, in: channel, context)
            }
            return Done()
        }
    }

    private func leaveTopic(_ request: LeaveTopic) async throws(RtmError) -> Done {
        let operation = LeaveTopic.operation
        let (context, _) = try running(operation)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        try TopicValidation.checkTopic(request.topic, limits: context.limits(for: request.caller.app), operation: operation)
        return try await turns.run { () async throws(RtmError) in
            let publisher = try await store.leaveTopic(request.caller.session, request.topic, in: channel, operation: operation)
            if !isRelayed {
                announce(.remoteLeaveTopic, [TopicInfo(topic: request.topic, publishers: [publisher])], by: request.caller, in: channel, context)
            }
            return Done()
        }
    }

    /// Pushes a topic event about `caller` to the other members of `channel`.
    func announce(
        _ type: RtmTopicEventType, _ topics: [TopicInfo], by caller: Caller, in channel: ChannelKey, _ context: ModuleContext
    ) {
        let others = members.members(of: channel).map(\.session).filter { $0 != caller.session }
        guard !others.isEmpty else { return }
        let event = TopicEvent(
            type: type, channelName: channel.name, publisher: caller.userId, topicInfos: topics,
            timestamp: context.clock.wallMilliseconds)
        context.outbox.deliver(.topic(event), to: others)
    }

    // MARK: Messages

    private func publish(_ request: PublishTopicMessage) async throws(RtmError) -> Done {
        let operation = PublishTopicMessage.operation
        let (context, _) = try running(operation)
        let limits = context.limits(for: request.caller.app)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        try TopicValidation.checkTopic(request.topic, limits: limits, operation: operation)
        guard request.payload.byteCount <= limits.streams.topicPayloadMaxBytes else {
            throw RtmError(
                .channelMessageLengthExceedLimitation, operation: operation,
                reason: "payload is \(request.payload.byteCount) bytes; at most \(limits.streams.topicPayloadMaxBytes)")
        }
        try Validation.checkCustomType(request.customType, limits: limits, operation: operation)
        return try await turns.run { () async throws(RtmError) in
            let (publication, receivers) = try await store.publication(
                of: request.caller.session, in: request.topic, of: channel, operation: operation)
            let limit = limits.streams.topicMessagesPerSecond
            guard rates.take(request.topic, in: channel, now: context.clock.now, limit: limit) else {
                throw RtmError(
                    .operationRateExceedLimitation, operation: operation,
                    reason: "more than \(limit ?? 0) messages per second in topic \(request.topic)")
            }
            let relayed = isRelayed
            guard !receivers.isEmpty || relayed else { return Done() }
            let timestamp =
                publication.options.syncWithMedia && request.sendTs > 0 ? request.sendTs : context.clock.wallMilliseconds
            let delivery = MessageDelivery(
                channelType: .stream, channelName: channel.name, channelTopic: request.topic, payload: request.payload,
                publisher: publication.userId, customType: request.customType, timestamp: timestamp)
            // Handed to the other nodes first: a message that cannot leave this node fails for
            // everyone rather than reaching some.
            if relayed { try store.relay(TopicMessage(channel: channel, delivery: delivery, priority: publication.options.priority)) }
            guard !receivers.isEmpty else { return Done() }
            context.outbox.deliver(.message(delivery), to: receivers, priority: publication.options.priority)
            return Done()
        }
    }

    // MARK: Subscriptions

    private func subscribe(_ request: SubscribeTopic) async throws(RtmError) -> TopicSubscription {
        let operation = SubscribeTopic.operation
        let (context, _) = try running(operation)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        let limits = context.limits(for: request.caller.app)
        try TopicValidation.checkTopic(request.topic, limits: limits, operation: operation)
        try TopicValidation.checkUserList(request.users, limits: limits, operation: operation)
        return try await turns.run { () async throws(RtmError) in
            try await store.subscribe(
                request.caller.session, to: request.users, in: request.topic, of: channel, limits: limits,
                operation: operation)
        }
    }

    private func unsubscribe(_ request: UnsubscribeTopic) async throws(RtmError) -> Done {
        let operation = UnsubscribeTopic.operation
        let (context, _) = try running(operation)
        let channel = try streamChannel(request.channelName, of: request.caller, context, operation)
        let limits = context.limits(for: request.caller.app)
        try TopicValidation.checkTopic(request.topic, limits: limits, operation: operation)
        try TopicValidation.checkUserList(request.users, limits: limits, operation: operation)
        return try await turns.run { () async throws(RtmError) in
            try await store.unsubscribe(request.caller.session, from: request.users, in: request.topic, of: channel, operation: operation)
            return Done()
        }
    }

    // MARK: Helpers

    /// Checks a join token when a verifier answers; returns its grant, nil when none checks tokens.
    private func verifyToken(
        _ token: String, for caller: Caller, channel: String, _ context: ModuleContext, _ operation: String
    ) async throws(RtmError) -> ChannelJoinGrant? {
        guard context.bus.hasHandler(VerifyChannelJoinToken.self) else { return nil }
        do {
            return try await context.bus.request(
                VerifyChannelJoinToken(app: caller.app, userId: caller.userId, channelName: channel, token: token))
        } catch {
            throw RtmError(error.code, operation: operation, reason: error.reason)
        }
    }

    private func streamChannel(
        _ name: String, of caller: Caller, _ context: ModuleContext, _ operation: String
    ) throws(RtmError) -> ChannelKey {
        try Validation.checkChannelName(name, limits: context.limits, operation: operation)
        return caller.channel(.stream, name)
    }

    func running(_ operation: String) throws(RtmError) -> (ModuleContext, EndedSessions) {
        guard case .running(let context, let ended) = state else {
            throw RtmError(.notInitialized, operation: operation, reason: "the topic router has not been started")
        }
        return (context, ended)
    }
}
