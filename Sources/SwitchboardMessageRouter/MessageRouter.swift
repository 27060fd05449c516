import SwitchboardCore

/// The message-router module: message-channel subscriptions, publishing, user-channel delivery.
///
/// It answers `Subscribe`, `Unsubscribe`, `Publish` and `ChannelsOfSession`; it publishes
/// `ChannelJoined`, `ChannelLeft` and (when someone listens) `MessagePublished`; it listens for
/// `SessionClosed` to drop a finished session's subscriptions. User-channel receivers are found by
/// asking the bus `SessionsOfUser`.
public actor MessageRouter: Module {
    public nonisolated let name = "message-router"

    private var table = SubscriptionTable()
    /// Sessions known to have ended, newest last: a request that raced a session's end must not
    /// leave a subscription behind. Session ids are never reused, so a bounded memory suffices.
    private var endedSessions = Set<SessionID>()
    private var endedOrder: [SessionID] = []
    private let endedMemory = 65_536
    private var context: ModuleContext?
    private var subscription: BusSubscription?

    /// Creates the module.
    public init() {}

    public func start(_ context: ModuleContext) async {
        self.context = context
        let bus = context.bus
        bus.handle(Subscribe.self) { [self] request throws(RtmError) in try await subscribe(request) }
        bus.handle(Unsubscribe.self) { [self] request throws(RtmError) in try await unsubscribe(request) }
        bus.handle(Publish.self) { [self] request throws(RtmError) in try await publish(request) }
        bus.handle(ChannelsOfSession.self) { [self] request in
            await table.channels(of: request.session).map { ChannelKey(.message, $0) }
        }
        subscription = bus.subscribe(SessionClosed.self) { [self] event in await sessionClosed(event) }
    }

    public func shutdown() async {
        subscription?.cancel()
        subscription = nil
    }

    // MARK: Subscriptions

    private func subscribe(_ request: Subscribe) throws(RtmError) -> Done {
        let context = try started(Subscribe.operation)
        try Validation.checkChannelName(request.channelName, limits: context.limits, operation: Subscribe.operation)
        guard !endedSessions.contains(request.session) else {
            throw RtmError(.notLogin, operation: Subscribe.operation, reason: "the session has ended")
        }
        let isNew = table.features(of: request.session, in: request.channelName) == nil
        guard !isNew || table.subscriberCount(of: request.channelName) < context.limits.usersPerChannel else {
            throw RtmError(
                .channelJoinFailed, operation: Subscribe.operation,
                reason: "\(request.channelName) already has \(context.limits.usersPerChannel) subscribers")
        }
        let limit = context.limits.subscribedChannelsPerClient
        guard
            table.subscribe(
                request.session, userId: request.userId, channel: request.channelName,
                features: request.features, limit: limit)
        else {
            throw RtmError(
                .channelInstanceExceedLimitation, operation: Subscribe.operation,
                reason: "already subscribed to \(limit) channels")
        }
        context.bus.publish(
            ChannelJoined(
                session: request.session, userId: request.userId, channel: ChannelKey(.message, request.channelName),
                features: request.features.rawValue))
        return Done()
    }

    private func unsubscribe(_ request: Unsubscribe) throws(RtmError) -> Done {
        let context = try started(Unsubscribe.operation)
        try Validation.checkChannelName(request.channelName, limits: context.limits, operation: Unsubscribe.operation)
        guard table.unsubscribe(request.session, channel: request.channelName) else {
            throw RtmError(
                .channelNotSubscribed, operation: Unsubscribe.operation,
                reason: "not subscribed to \(request.channelName)")
        }
        context.bus.publish(
            ChannelLeft(
                session: request.session, userId: request.userId, channel: ChannelKey(.message, request.channelName),
                reason: .left))
        return Done()
    }

    private func sessionClosed(_ event: SessionClosed) {
        guard let context else { return }
        if endedSessions.insert(event.session).inserted {
            endedOrder.append(event.session)
            if endedOrder.count > endedMemory {
                endedSessions.remove(endedOrder.removeFirst())
            }
        }
        for name in table.removeAll(of: event.session) {
            context.bus.publish(
                ChannelLeft(
                    session: event.session, userId: event.userId, channel: ChannelKey(.message, name),
                    reason: .sessionClosed(event.reason)))
        }
    }

    // MARK: Publishing

    private func publish(_ request: Publish) async throws(RtmError) -> Done {
        let context = try started(Publish.operation)
        let limits = context.limits
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
            receivers = table.messageReceivers(of: request.channelName)
            deliveredName = request.channelName
        case .user:
            try Validation.checkUserId(request.channelName, limits: limits, operation: Publish.operation)
            receivers = try await context.bus.request(SessionsOfUser(userId: request.channelName))
            guard !receivers.isEmpty else {
                throw RtmError(
                    .channelReceiverOffline, operation: Publish.operation,
                    reason: "user \(request.channelName) is not online")
            }
            deliveredName = request.userId
        case .stream, .none:
            throw RtmError(
                .invalidChannelType, operation: Publish.operation,
                reason: "publish takes channelType message or user; stream channels publish on topics")
        }
        let delivery = MessageDelivery(
            channelType: request.channelType, channelName: deliveredName, payload: request.payload,
            publisher: request.userId, customType: request.customType, timestamp: context.clock.wallMilliseconds)
        context.outbox.deliver(.message(delivery), to: receivers)
        if context.bus.subscriberCount(of: MessagePublished.self) > 0 {
            context.bus.publish(
                MessagePublished(
                    publisher: request.userId, channel: ChannelKey(request.channelType, request.channelName),
                    payloadBytes: request.payload.byteCount, customType: request.customType,
                    receivers: receivers.count))
        }
        return Done()
    }

    private func started(_ operation: String) throws(RtmError) -> ModuleContext {
        guard let context else {
            throw RtmError(.notInitialized, operation: operation, reason: "the message router has not been started")
        }
        return context
    }
}
