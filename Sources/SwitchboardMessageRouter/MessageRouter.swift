import SwitchboardCore

/// The message-router module: message-channel subscriptions, publishing, user-channel delivery,
/// each app on its own.
///
/// It answers `Subscribe`, `Unsubscribe`, `Publish` and `ChannelsOfSession`; it publishes
/// `ChannelJoined`, `ChannelLeft` and (when someone listens) `MessagePublished`; it drops a
/// finished session's subscriptions on `SessionClosed`. User-channel receivers are found by
/// asking the bus `SessionsOfUser`.
public actor MessageRouter: Module {
    public nonisolated let name = "message-router"

    private enum State {
        case idle
        case running(ModuleContext, ended: EndedSessions)
    }
    private var state = State.idle
    private var table = SubscriptionTable()
    private var rates = ChannelRates(limits: Limits())
    /// How often idle rate windows are forgotten and discards are logged.
    public nonisolated let sweepInterval: Duration

    /// Creates the module.
    public init(sweepInterval: Duration = .seconds(10)) {
        self.sweepInterval = sweepInterval
    }

    public func start(_ context: ModuleContext) async {
        let ended = context.onSessionEnd { [self] event in await sessionClosed(event) }
        state = .running(context, ended: ended)
        rates = ChannelRates(limits: context.limits)
        let bus = context.bus
        bus.handle(Subscribe.self) { [self] request throws(RtmError) in try await subscribe(request) }
        bus.handle(Unsubscribe.self) { [self] request throws(RtmError) in try await unsubscribe(request) }
        bus.handle(Publish.self) { [self] request throws(RtmError) in try await publish(request) }
        bus.handle(ChannelsOfSession.self) { [self] request in await table.channels(of: request.caller.session) }
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        for await now in context.clock.ticks(every: sweepInterval) { sweep(now: now, context.log) }
    }

    /// Messages discarded so far because their channel was over its rate.
    public var discardedMessages: Int { rates.discardedTotal }

    private func sweep(now: Duration, _ log: SwitchboardLog) {
        rates.sweep(now: now)
        let discarded = rates.takeDiscarded()
        if discarded > 0 {
            log(.info, "discarded \(discarded) messages over the per-channel rate of \(rates.limits.messagesPerSecondPerChannel ?? 0)/s")
        }
    }

    // MARK: Subscriptions

    private func subscribe(_ request: Subscribe) throws(RtmError) -> Done {
        let (context, ended) = try running(Subscribe.operation)
        let limits = context.limits
        try Validation.checkChannelName(request.channelName, limits: limits, operation: Subscribe.operation)
        let caller = request.caller
        guard !ended.contains(caller.session) else {
            throw RtmError(.notLogin, operation: Subscribe.operation, reason: "the session has ended")
        }
        let channel = caller.channel(.message, request.channelName)
        guard rates.admitSubscribe(caller.session, to: channel, now: context.clock.now) else {
            throw RtmError(
                .channelSubscribeTooFrequent, operation: Subscribe.operation,
                reason: "more than \(limits.subscribeAttemptsPerChannel) subscribe calls to \(request.channelName) within \(limits.subscribeAttemptWindow)")
        }
        let isNew = table.features(of: caller.session, in: channel) == nil
        guard !isNew || table.subscriberCount(of: channel) < limits.usersPerChannel else {
            throw RtmError(
                .channelJoinFailed, operation: Subscribe.operation,
                reason: "\(request.channelName) already has \(limits.usersPerChannel) subscribers")
        }
        guard
            table.subscribe(
                caller.session, to: channel, features: request.features, limit: limits.subscribedChannelsPerClient)
        else {
            throw RtmError(
                .channelInstanceExceedLimitation, operation: Subscribe.operation,
                reason: "already subscribed to \(limits.subscribedChannelsPerClient) channels")
        }
        context.bus.publish(ChannelJoined(caller: caller, channel: channel, features: ChannelFeatures(request.features)))
        return Done()
    }

    private func unsubscribe(_ request: Unsubscribe) throws(RtmError) -> Done {
        let (context, _) = try running(Unsubscribe.operation)
        try Validation.checkChannelName(request.channelName, limits: context.limits, operation: Unsubscribe.operation)
        let channel = request.caller.channel(.message, request.channelName)
        guard table.unsubscribe(request.caller.session, from: channel) else {
            throw RtmError(
                .channelNotSubscribed, operation: Unsubscribe.operation,
                reason: "not subscribed to \(request.channelName)")
        }
        context.bus.publish(ChannelLeft(caller: request.caller, channel: channel, reason: .left))
        return Done()
    }

    private func sessionClosed(_ event: SessionClosed) {
        guard case .running(let context, _) = state else { return }
        for channel in table.removeAll(of: event.session) {
            context.bus.publish(ChannelLeft(caller: event.caller, channel: channel, reason: .sessionClosed(event.reason)))
        }
    }

    // MARK: Publishing

    private func publish(_ request: Publish) async throws(RtmError) -> Done {
        let (context, _) = try running(Publish.operation)
        let limits = context.limits
        let caller = request.caller
        guard request.payload.byteCount <= limits.messagePayloadMaxBytes else {
            throw RtmError(
                .channelMessageLengthExceedLimitation, operation: Publish.operation,
                reason: "payload is \(request.payload.byteCount) bytes; at most \(limits.messagePayloadMaxBytes)")
        }
        try Validation.checkCustomType(request.customType, limits: limits, operation: Publish.operation)
        let receivers: [SessionID]
        let deliveredName: String
        switch request.channelType {
        case .message:
            try Validation.checkChannelName(request.channelName, limits: limits, operation: Publish.operation)
            let channel = caller.channel(.message, request.channelName)
            // Over the channel's rate the message is discarded, and the publish still succeeds.
            guard rates.admitMessage(on: channel, now: context.clock.now) else { return Done() }
            receivers = table.messageReceivers(of: channel)
            deliveredName = request.channelName
        case .user:
            try Validation.checkUserId(request.channelName, limits: limits, operation: Publish.operation)
            receivers = try await context.bus.request(SessionsOfUser(user: UserKey(caller.app, request.channelName)))
            guard !receivers.isEmpty else {
                throw RtmError(
                    .channelReceiverOffline, operation: Publish.operation,
                    reason: "user \(request.channelName) is not online")
            }
            deliveredName = caller.userId
        case .stream, .none:
            throw RtmError(
                .invalidChannelType, operation: Publish.operation,
                reason: "publish takes channelType message or user; stream channels publish on topics")
        }
        let delivery = MessageDelivery(
            channelType: request.channelType, channelName: deliveredName, payload: request.payload,
            publisher: caller.userId, customType: request.customType, timestamp: context.clock.wallMilliseconds)
        context.outbox.deliver(.message(delivery), to: receivers)
        if context.bus.subscriberCount(of: MessagePublished.self) > 0 {
            context.bus.publish(
                MessagePublished(
                    publisher: caller, channel: caller.channel(request.channelType, request.channelName),
                    payloadBytes: request.payload.byteCount, customType: request.customType,
                    receivers: receivers.count))
        }
        return Done()
    }

    private func running(_ operation: String) throws(RtmError) -> (ModuleContext, EndedSessions) {
        guard case .running(let context, let ended) = state else {
            throw RtmError(.notInitialized, operation: operation, reason: "the message router has not been started")
        }
        return (context, ended)
    }
}
