import SwitchboardCore

extension Storage {
    func get(_ request: GetChannelMetadata) async throws(RtmError) -> Metadata {
        let operation = GetChannelMetadata.operation
        let running = try running(operation)
        guard request.channelType == .message || request.channelType == .stream else {
            throw RtmError(.invalidChannelType, operation: operation, reason: "channel metadata needs channelType message or stream")
        }
        try Validation.checkChannelName(request.channelName, limits: running.context.limits, operation: operation)
        let target = MetadataTarget.channel(request.caller.channel(request.channelType, request.channelName))
        return try await metadata(try await store.read(target), of: target, operation: operation)
    }

    func get(_ request: GetUserMetadata) async throws(RtmError) -> Metadata {
        let operation = GetUserMetadata.operation
        let running = try running(operation)
        try Validation.checkUserId(request.userId, limits: running.context.limits, operation: operation)
        let target = MetadataTarget.user(UserKey(request.caller.app, request.userId))
        return try await metadata(try await store.read(target), of: target, operation: operation)
    }

    func subscribe(_ request: SubscribeUserMetadata) async throws(RtmError) -> Done {
        let operation = SubscribeUserMetadata.operation
        let running = try running(operation)
        let limits = running.context.limits(for: request.caller.app)
        try Validation.checkUserId(request.userId, limits: limits, operation: operation)
        let session = request.caller.session
        guard !running.members.ended.contains(session) else {
            throw RtmError(.notLogin, operation: operation, reason: "the session has ended")
        }
        let user = UserKey(request.caller.app, request.userId)
        guard !audience.isSubscribed(session, to: user) else { return Done() }
        guard audience.userSubscriptions(of: session) < limits.storage.userSubscriptionsPerClient else {
            throw RtmError(
                .storageSubscribeUserExceedLimitation, operation: operation,
                reason: "already subscribed to \(limits.storage.userSubscriptionsPerClient) users' metadata")
        }
        _ = audience.subscribe(session, to: user)
        announce(session, subscribed: true, to: user, running)
        do {
            try await openRelay(for: .user(user), running)
        } catch {
            if audience.unsubscribe(session, from: user) { announce(session, subscribed: false, to: user, running) }
            throw RtmError(.storageOperationTimeout, operation: operation, reason: error.reason)
        }
        await sendSnapshot(of: .user(user), to: session)
        return Done()
    }

    func unsubscribe(_ request: UnsubscribeUserMetadata) throws(RtmError) -> Done {
        let operation = UnsubscribeUserMetadata.operation
        let running = try running(operation)
        try Validation.checkUserId(request.userId, limits: running.context.limits, operation: operation)
        let user = UserKey(request.caller.app, request.userId)
        guard audience.unsubscribe(request.caller.session, from: user) else {
            throw RtmError(.storageNotSubscribe, operation: operation, reason: "not subscribed to the metadata of \(request.userId)")
        }
        announce(request.caller.session, subscribed: false, to: user, running)
        return Done()
    }

    /// A stored set as clients see it, its values opened if they were sealed at rest. No set is
    /// an empty one with revision 0.
    func metadata(_ set: StoredSet?, of target: MetadataTarget, operation: String) async throws(RtmError) -> Metadata {
        guard let set else { return Metadata(majorRevision: 0, items: []) }
        var values = set.items.map(\.value)
        let running = try running(operation)
        if running.sealing {
            do {
                values = try await running.context.bus.request(
                    OpenAtRest(
                        sealed: values, associatedData: set.items.map { AtRestBinding.associatedData(target, key: $0.key) }))
            } catch {
                throw RtmError(.storageOperationFailed, operation: operation, reason: "cannot open the stored values: \(error.reason)")
            }
        }
        let items = zip(set.items, values).map { item, value in
            MetadataItem(
                key: item.key, value: String(decoding: value, as: UTF8.self), revision: item.revision, updateTs: item.updateTs,
                authorUserId: item.author, expiresAt: item.expiresAt, sessionBound: item.session != nil)
        }
        return Metadata(majorRevision: set.majorRevision, items: items)
    }
}
