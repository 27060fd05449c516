import SwitchboardCore

/// The message-router module: message-channel subscriptions, publishing, user-channel delivery,
/// each app on its own.
///
/// It answers `Subscribe`, `Unsubscribe` and `Publish` (and the usual user-channel publish read
/// in place, `PublishInPlace`); it publishes `ChannelJoined`,
/// `ChannelLeft` and (when someone listens) `MessagePublished`; it drops a finished session's
/// subscriptions on `SessionClosed`.
///
/// Subscriptions live in a `SubscriptionStore` and change one at a time (`OneAtATime`), each
/// change applied to `Routes` and announced in the store's order. Publishing does not wait for the
/// actor: `Publish` is answered from `Routes` (the subscriptions and the users' sessions seen from
/// `SessionOpened` and `SessionClosed`) on the caller's thread (`EventBus.handleImmediately`), so
/// publishes to different channels run in parallel.
public actor MessageRouter: Module {
    public nonisolated let name = "message-router"

    private enum State {
        case idle
        case running(ModuleContext, ended: EndedSessions, routes: Routes)
    }
    private var state = State.idle
    private let store: any SubscriptionStore
    private let turns = OneAtATime()
    /// How often idle rate windows are forgotten and discards are logged.
    public nonisolated let sweepInterval: Duration

    /// Creates the module over `store` (in memory by default).
    public init(store: any SubscriptionStore = InMemorySubscriptionStore(), sweepInterval: Duration = .seconds(10)) {
        self.store = store
        self.sweepInterval = sweepInterval
    }

    public func start(_ context: ModuleContext) async {
        let ended = context.onSessionEnd { [self] event in await sessionClosed(event) }
        let routes = Routes()
        routes.observeSessions(on: context.bus)
        state = .running(context, ended: ended, routes: routes)
        let bus = context.bus
        let publishing = Publishing(context: context, routes: routes)
        bus.handle(Subscribe.self) { [self] request throws(RtmError) in try await subscribe(request) }
        bus.handle(Unsubscribe.self) { [self] request throws(RtmError) in try await unsubscribe(request) }
        bus.handle(UnsubscribeUser.self) { [self] request throws(RtmError) in try await unsubscribe(request) }
        bus.handle(RestoreSubscriptions.self) { [self] request throws(RtmError) in try await restore(request) }
        bus.handleAtOnceOrStarting(
            Publish.self, atOnce: { request throws(RtmError) in try publishing.publish(request) },
            start: { request, reply in publishing.forwardToUser(request, reply: reply) })
        bus.handleInPlace(PublishInPlace.self) { request in publishing.publishInPlace(request) }
        bus.handleImmediately(DeliverRelayedMessage.self) { request in publishing.deliverRelayed(request) }
        bus.observe(RelayGapped.self) { event in Self.tellGap(event, routes: routes, outbox: context.outbox) }
    }

    /// Tells each session that hears messages of a channel (or of its user) in a pub/sub gap that
    /// some may have been missed: pub/sub keeps nothing for a node whose link was down.
    private static func tellGap(_ event: RelayGapped, routes: Routes, outbox: any Outbox) {
        for target in event.targets {
            switch target {
            case .channel(let channel):
                let listeners = routes.listeners(of: channel)
                if !listeners.isEmpty {
                    outbox.deliver(.session(.messagesMayBeLost(channelType: .message, channel: channel.name)), to: listeners)
                }
            case .user(let user):
                let sessions = Array(routes.sessions(of: user))
                if !sessions.isEmpty {
                    outbox.deliver(.session(.messagesMayBeLost(channelType: .user, channel: user.userId)), to: sessions)
                }
            }
        }
    }

    public func run() async throws {
        guard case .running(let context, _, let routes) = state else { return }
        for await now in context.clock.ticks(every: sweepInterval) {
            let discarded = routes.sweep(now: now)
            if discarded > 0 {
                context.log(.info, "discarded \(discarded) messages over the per-channel rates")
            }
        }
    }

    /// Messages discarded so far because their channel was over its rate.
    public var discardedMessages: Int {
        guard case .running(_, _, let routes) = state else { return 0 }
        return routes.discardedTotal
    }

    // MARK: Subscriptions

    private func subscribe(_ request: Subscribe) async throws(RtmError) -> Done {
        let (context, ended, routes) = try running(Subscribe.operation)
        let caller = request.caller
        let limits = context.limits(for: caller.app)
        try Validation.checkChannelName(request.channelName, limits: limits, operation: Subscribe.operation)
        guard !ended.contains(caller.session) else {
            throw RtmError(.notLogin, operation: Subscribe.operation, reason: "the session has ended")
        }
        let channel = caller.channel(.message, request.channelName)
        guard routes.admitSubscribe(caller.session, to: channel, now: context.clock.now, limits: limits) else {
            throw RtmError(
                .channelSubscribeTooFrequent, operation: Subscribe.operation,
                reason: "more than \(limits.messages.subscribeAttemptsPerChannel) subscribe calls to \(request.channelName) within \(limits.messages.subscribeAttemptWindow)")
        }
        try await turns.run { () async throws(RtmError) in
            // In the turn: either this sees the session's end, or the end's cleanup runs after it.
            guard !ended.contains(caller.session) else {
                throw RtmError(.notLogin, operation: Subscribe.operation, reason: "the session has ended")
            }
            let features = ChannelFeatures(request.features)
            if let change = try await store.subscribe(
                caller, to: channel, features: features, limits: limits, operation: Subscribe.operation)
            {
                routes.apply(change)
            }
            context.bus.publish(ChannelJoined(caller: caller, channel: channel, features: features))
        }
        try await openRelay(to: channel, for: caller, context, routes)
        // A subscription that changed its features is answered after the publishes that read the old ones.
        await routes.publishesBefore(channel)
        return Done()
    }

    /// Subscribes a session another node held to its message channels here, with the features
    /// it had (no rate window counts them: the client asked for none of these). A channel it
    /// cannot have again (a limit lowered since, the relay down) is left out of the answer.
    private func restore(_ request: RestoreSubscriptions) async throws(RtmError) -> [ChannelKey] {
        let (context, ended, routes) = try running(RestoreSubscriptions.operation)
        let caller = request.caller
        let limits = context.limits(for: caller.app)
        var restored: [ChannelKey] = []
        for membership in request.memberships where membership.channel.type == .message && membership.channel.app == caller.app {
            let channel = membership.channel
            do {
                try await turns.run { () async throws(RtmError) in
                    guard !ended.contains(caller.session) else {
                        throw RtmError(.notLogin, operation: RestoreSubscriptions.operation, reason: "the session has ended")
                    }
                    if let change = try await store.subscribe(
                        caller, to: channel, features: membership.features, limits: limits, operation: RestoreSubscriptions.operation)
                    {
                        routes.apply(change)
                    }
                    context.bus.publish(ChannelJoined(caller: caller, channel: channel, features: membership.features))
                }
                try await openRelay(to: channel, for: caller, context, routes)
                restored.append(channel)
            } catch {
                context.log(.warning, "\(caller) is not subscribed to \(channel.name) again here: \(error)")
            }
        }
        return restored
    }

    private func unsubscribe(_ request: Unsubscribe) async throws(RtmError) -> Done {
        let (context, _, routes) = try running(Unsubscribe.operation)
        try Validation.checkChannelName(request.channelName, limits: context.limits, operation: Unsubscribe.operation)
        let channel = request.caller.channel(.message, request.channelName)
        try await turns.run { () async throws(RtmError) in
            guard let change = try await store.unsubscribe(request.caller, from: channel) else {
                throw RtmError(
                    .channelNotSubscribed, operation: Unsubscribe.operation,
                    reason: "not subscribed to \(request.channelName)")
            }
            routes.apply(change)
            context.bus.publish(ChannelLeft(caller: request.caller, channel: channel, reason: .left))
        }
        // Answered once no push that read the old receivers is still on its way to the outbox:
        // after its ok, the client gets no message of the channel.
        await routes.publishesBefore(channel)
        return Done()
    }

    /// Unsubscribes every session of a user (the server's API), as each would itself.
    private func unsubscribe(_ request: UnsubscribeUser) async throws(RtmError) -> Int {
        let operation = UnsubscribeUser.operation
        let (context, _, routes) = try running(operation)
        try Validation.checkChannelName(request.channelName, limits: context.limits, operation: operation)
        try Validation.checkUserId(request.userId, limits: context.limits, operation: operation)
        let channel = request.caller.channel(.message, request.channelName)
        let left = try await turns.run { () async throws(RtmError) in
            let changes = try await store.unsubscribe(UserKey(request.caller.app, request.userId), from: channel)
            for change in changes {
                routes.apply(change)
                context.bus.publish(ChannelLeft(caller: change.member, channel: channel, reason: .left))
            }
            return changes.count
        }
        guard left > 0 else {
            throw RtmError(
                .channelNotSubscribed, operation: operation, reason: "\(request.userId) is not subscribed to \(request.channelName)")
        }
        await routes.publishesBefore(channel)
        return left
    }

    /// With other nodes (a relay handles `OpenRelay`), makes sure their messages of `channel`
    /// reach this node before the subscribe is answered; when they cannot, the subscription is
    /// undone and the subscribe fails with the relay's timeout.
    private func openRelay(
        to channel: ChannelKey, for caller: Caller, _ context: ModuleContext, _ routes: Routes
    ) async throws(RtmError) {
        guard context.bus.hasHandler(OpenRelay.self) else { return }
        do {
            _ = try await context.bus.request(OpenRelay(.channel(channel)))
        } catch {
            try? await turns.run { () async throws(RtmError) in
                guard let change = try await store.unsubscribe(caller, from: channel) else { return }
                routes.apply(change)
                context.bus.publish(ChannelLeft(caller: caller, channel: channel, reason: .left))
            }
            throw RtmError(error.code, operation: Subscribe.operation, reason: error.reason)
        }
    }

    private func sessionClosed(_ event: SessionClosed) async {
        guard case .running(let context, _, let routes) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                for change in try await store.sessionEnded(event.caller, reason: event.reason) {
                    routes.apply(change)
                    context.bus.publish(ChannelLeft(caller: event.caller, channel: change.channel, reason: .sessionClosed(event.reason)))
                }
            }
        } catch {
            context.log(.error, "cannot end the subscriptions of \(event.caller): \(error)")
        }
    }

    private func running(_ operation: String) throws(RtmError) -> (ModuleContext, EndedSessions, Routes) {
        guard case .running(let context, let ended, let routes) = state else {
            throw RtmError(.notInitialized, operation: operation, reason: "the message router has not been started")
        }
        return (context, ended, routes)
    }
}
