import SwitchboardCore

/// Publishing to message and user channels, answered on the caller's thread from `Routes`.
struct Publishing: Sendable {
    let context: ModuleContext
    let routes: Routes
    /// Who listens for `MessagePublished`, read on every publish.
    private let publishedListeners: ListenerCount

    init(context: ModuleContext, routes: Routes) {
        self.context = context
        self.routes = routes
        publishedListeners = context.bus.listenerCount(of: MessagePublished.self)
    }

    /// Checks and delivers `request` to this node's receivers; nil, having delivered nothing, for
    /// a user-channel message whose receiver has no session here while other nodes may hold one
    /// (a relay handles `ForwardUserMessage`): `forwardToUser` carries that one.
    func publish(_ request: Publish) throws(RtmError) -> Done? {
        let caller = request.caller
        // The caller's app's limits, read once: a reload applies from the next publish on.
        let limits = context.withLimits(for: caller.app) { PublishLimits($0) }
        guard request.payload.byteCount <= limits.payloadMaxBytes else {
            throw RtmError(
                .channelMessageLengthExceedLimitation, operation: Publish.operation,
                reason: "payload is \(request.payload.byteCount) bytes; at most \(limits.payloadMaxBytes)")
        }
        try Validation.checkCustomType(request.customType, maxLength: limits.customTypeMaxLength, operation: Publish.operation)
        let receivers: Listeners
        let deliveredName: String
        /// A message channel's publish, which changes of its subscriptions wait for.
        var inFlight: (ticket: UInt64, channel: ChannelKey)?
        switch request.channelType {
        case .message:
            try Validation.checkChannelName(request.channelName, maxLength: limits.channelNameMaxLength, operation: Publish.operation)
            let channel = caller.channel(.message, request.channelName)
            // Over the channel's rate the message is discarded, and the publish still succeeds.
            guard let admitted = routes.admitMessage(on: channel, now: context.clock.now, perSecond: limits.perChannelPerSecond)
            else { return Done() }
            inFlight = (admitted.ticket, channel)
            receivers = admitted.receivers
            deliveredName = request.channelName
        case .user:
            try Validation.checkUserId(request.channelName, maxBytes: limits.userIdMaxBytes, operation: Publish.operation)
            let sessions = routes.sessions(of: UserKey(caller.app, request.channelName))
            guard !sessions.isEmpty else {
                if context.bus.hasHandler(ForwardUserMessage.self) { return nil }
                throw receiverOffline(request)
            }
            // Several sessions of one user get the message oldest first.
            receivers = sessions.onlyElement.map(Listeners.one) ?? .list(sessions.sorted())
            deliveredName = caller.userId
        case .stream, .none:
            throw RtmError(
                .invalidChannelType, operation: Publish.operation,
                reason: "publish takes channelType message or user; stream channels publish on topics")
        }
        let delivery = delivery(of: request, named: deliveredName)
        let published =
            publishedListeners.current > 0
            ? MessagePublished(
                publisher: caller, channel: caller.channel(request.channelType, request.channelName),
                delivery: delivery, receivers: receivers.count)
            : nil
        switch receivers {
        // Handed over, not copied (a copy is a retain and a release of each string).
        case .one(let session): context.outbox.deliver(.message(consume delivery), to: session)
        case .list(let sessions): context.outbox.deliver(.message(delivery), to: sessions)
        }
        // A subscription change of the channel is answered only once this push is handed over.
        if let inFlight { routes.delivered(inFlight.ticket, on: inFlight.channel) }
        if let published { context.bus.publish(published) }
        return Done()
    }

    /// Delivers a publish read in place to this node's receivers, the push written from the
    /// frame's bytes: a message channel's subscribers, or a user's one session here. Nil, having
    /// done nothing, for any other (a check that fails, a user with no session here or several,
    /// someone listening for `MessagePublished`): the owned `Publish` takes those, with their errors.
    func publishInPlace(_ request: PublishInPlace) -> Done? {
        guard publishedListeners.current == 0 else { return nil }
        let caller = request.caller
        let limits = context.withLimits(for: caller.app) { PublishLimits($0) }
        guard request.payload.count <= limits.payloadMaxBytes,
            Validation.customTypeProblem(request.customType, maxLength: limits.customTypeMaxLength) == nil
        else { return nil }
        /// The message as receivers get it, on `name` (the channel, or the publisher), stamped when
        /// the server read it.
        func message(named name: String) -> LentMessage {
            LentMessage(
                channelType: request.channelType, channelName: name, payload: request.payload,
                payloadIsString: request.payloadIsString, publisher: caller.userId, customType: request.customType,
                timestamp: request.receivedAt)
        }
        switch request.channelType {
        case .user:
            guard
                let session = onlySession(
                    ofUser: request.channelName, in: caller.app, maxBytes: limits.userIdMaxBytes, memo: request.receiverMemo)
            else { return nil }
            if let memo = request.receiverMemo {
                context.outbox.deliver(message(named: caller.userId), to: session, memo: &memo.pointee.outbox)
            } else {
                context.outbox.deliver(message(named: caller.userId), to: session)
            }
        case .message:
            guard Validation.nameProblem(request.channelName, maxLength: limits.channelNameMaxLength) == nil else { return nil }
            let name = String(copyingUTF8: request.channelName)
            let channel = caller.channel(.message, name)
            // Over the channel's rate the message is discarded, and the publish still succeeds.
            guard let admitted = routes.admitMessage(on: channel, now: context.clock.now, perSecond: limits.perChannelPerSecond)
            else { return Done() }
            switch admitted.receivers {
            case .one(let session): context.outbox.deliver(message(named: name), to: session)
            case .list(let sessions): context.outbox.deliver(message(named: name), to: sessions)
            }
            // A subscription change of the channel is answered only once this push is handed over.
            routes.delivered(admitted.ticket, on: channel)
        case .stream, .none:
            return nil
        }
        return Done()
    }

    /// The one session of the user `name` of `app`, nil when `name` is no valid user id (at most
    /// `maxBytes`) or the user has not exactly one session: through the publisher's memo when it
    /// has one. The memo holds only a name that was checked in full, so a name it holds is checked
    /// against the byte limit alone (the one part that can change since, when limits are reloaded).
    private func onlySession(
        ofUser name: UnsafeRawBufferPointer, in app: AppID, maxBytes: Int, memo: UnsafeMutablePointer<ReceiverMemo>?
    ) -> SessionID? {
        guard name.count <= maxBytes else { return nil }
        let isValid = { (name: UnsafeRawBufferPointer) in Validation.userIdProblem(name, maxBytes: maxBytes) == nil }
        if let memo { return routes.onlySession(ofUser: name, in: app, memo: &memo.pointee, isValid: isValid) }
        guard isValid(name) else { return nil }
        return routes.sessions(of: UserKey(app, String(copyingUTF8: name))).onlyElement
    }

    /// Forwards a user-channel message whose receiver has no session on this node to the other
    /// nodes, without waiting: `reply` gets `channelReceiverOffline` when none of them holds one
    /// either, once the relay knows (`ForwardUserMessage`, started in the order publishes come).
    func forwardToUser(_ request: Publish, reply: @escaping Reply<Publish>) {
        let receiver = UserKey(request.caller.app, request.channelName)
        let delivery = delivery(of: request, named: request.caller.userId)
        context.bus.start(ForwardUserMessage(receiver: receiver, delivery: delivery)) { [self] result in
            switch result {
            case .success(true): reply(.success(Done()))
            case .success(false): reply(.failure(receiverOffline(request, delivery)))
            case .failure(let error): reply(.failure(RtmError(error.code, operation: Publish.operation, reason: error.reason)))
            }
        }
    }

    /// The refusal of a user-channel message whose receiver is offline, announced first as
    /// `UserMessageUndelivered` when someone listens (the webhooks' push-notification hook): off
    /// the delivered path, so a message that reaches its receiver never pays for it.
    private func receiverOffline(_ request: Publish, _ made: MessageDelivery? = nil) -> RtmError {
        if context.bus.listenerCount(of: UserMessageUndelivered.self).current > 0 {
            let delivery = made ?? delivery(of: request, named: request.caller.userId)
            context.bus.publish(
                UserMessageUndelivered(
                    publisher: request.caller, receiver: UserKey(request.caller.app, request.channelName), delivery: delivery))
        }
        return RtmError(.channelReceiverOffline, operation: Publish.operation, reason: "user \(request.channelName) is not online")
    }

    /// Hands a message another node accepted to this node's listeners of its target.
    func deliverRelayed(_ request: DeliverRelayedMessage) -> Done {
        switch request.target {
        case .channel(let channel):
            let (receivers, ticket) = routes.admitRelayed(on: channel)
            switch receivers {
            case .one(let session): context.outbox.deliver(.message(request.delivery), to: session)
            case .list(let sessions) where !sessions.isEmpty: context.outbox.deliver(.message(request.delivery), to: sessions)
            case .list: break
            }
            routes.delivered(ticket, on: channel)
        case .user(let user):
            let sessions = routes.sessions(of: user)
            if !sessions.isEmpty { context.outbox.deliver(.message(request.delivery), to: sessions.sorted()) }
        }
        return Done()
    }

    /// The message `request` publishes, as receivers get it: on `name` (the channel, or for a
    /// user channel the publisher), stamped now.
    private func delivery(of request: Publish, named name: String) -> MessageDelivery {
        MessageDelivery(
            channelType: request.channelType, channelName: name, payload: request.payload,
            publisher: request.caller.userId, customType: request.customType, timestamp: context.clock.wallMilliseconds)
    }

    /// The figures of an app's limits a publish checks, taken from the limits where they lie (a
    /// copy of them all is half a kilobyte, on every publish).
    private struct PublishLimits {
        let payloadMaxBytes: Int
        let customTypeMaxLength: Int
        let channelNameMaxLength: Int
        let userIdMaxBytes: Int
        let perChannelPerSecond: Int?

        init(_ limits: borrowing Limits) {
            payloadMaxBytes = limits.messages.payloadMaxBytes
            customTypeMaxLength = limits.messages.customTypeMaxLength
            channelNameMaxLength = limits.names.channelNameMaxLength
            userIdMaxBytes = limits.names.userIdMaxBytes
            perChannelPerSecond = limits.messages.perChannelPerSecond
        }
    }
}
