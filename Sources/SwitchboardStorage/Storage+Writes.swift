import SwitchboardCore

extension Storage {
    /// A channel-metadata write: the channel is checked, then the lock (if the write names one).
    func write<R: ChannelMetadataWrite>(_ request: R) async throws(RtmError) -> Done {
        let operation = R.operation
        let running = try running(operation)
        guard request.channelType == .message || request.channelType == .stream else {
            throw RtmError(.invalidChannelType, operation: operation, reason: "channel metadata needs channelType message or stream")
        }
        try Validation.checkChannelName(request.channelName, limits: running.context.limits, operation: operation)
        let channel = request.caller.channel(request.channelType, request.channelName)
        // The caller's app's limits, read once for the whole write.
        let limits = running.context.limits(for: request.caller.app)
        try MetadataRequestCheck.check(request.data, kind: R.kind, operation: operation, limits: limits)
        var fence: MetadataFence?
        if let lockName = request.lockName, !lockName.isEmpty {
            let token = try await checkLock(
                lockName, token: request.options.fencingToken, of: channel, for: request.caller, operation: operation,
                bus: running.context.bus)
            fence = MetadataFence(lockName: lockName, token: token, session: request.caller.session)
        }
        try await write(
            request.data, kind: R.kind, options: request.options, to: .channel(channel), caller: request.caller,
            fence: fence, limits: limits, operation: operation)
        return Done()
    }

    /// A user-metadata write (any user of the caller's app, as in the reference).
    func write<R: UserMetadataWrite>(_ request: R) async throws(RtmError) -> Done {
        let operation = R.operation
        let running = try running(operation)
        try Validation.checkUserId(request.userId, limits: running.context.limits, operation: operation)
        let limits = running.context.limits(for: request.caller.app)
        try MetadataRequestCheck.check(request.data, kind: R.kind, operation: operation, limits: limits)
        try await write(
            request.data, kind: R.kind, options: request.options, to: .user(UserKey(request.caller.app, request.userId)),
            caller: request.caller, limits: limits, operation: operation)
        return Done()
    }

    /// Seals the values if a storage key is in force, has the store apply the write under `limits`
    /// (refused there if `fence` is stale by then), tells the listeners, and removes the write's
    /// session-bound items again if the session ended meanwhile.
    private func write(
        _ data: Metadata, kind: MetadataWriteKind, options: MetadataOptions, to target: MetadataTarget, caller: Caller,
        fence: MetadataFence? = nil, limits: Limits, operation: String
    ) async throws(RtmError) {
        let running = try running(operation)
        let bindsSession = kind != .remove && data.items.contains { $0.lease == .session }
        if bindsSession && running.members.ended.contains(caller.session) {
            throw RtmError(.notLogin, operation: operation, reason: "the session has ended")
        }
        let now = running.context.clock.wallMilliseconds
        let values = kind == .remove ? [] : try await storedValues(data.items, of: target, running)
        let items = data.items.enumerated().map { offset, item in
            var lease: (expiresAt: UInt64?, session: SessionID?) = (nil, nil)
            switch (kind, item.lease) {
            case (.remove, _), (_, nil): break
            case (_, .timeToLive(let milliseconds)?): lease.expiresAt = now &+ milliseconds
            case (_, .session?): lease.session = caller.session
            }
            return MetadataWrite.Item(
                key: item.key, value: values.isEmpty ? [] : values[offset], size: kind == .remove ? 0 : item.value.utf8.count,
                expectedRevision: item.revision, expiresAt: lease.expiresAt, session: lease.session)
        }
        let write = MetadataWrite(
            kind: kind, operation: operation, expectedMajorRevision: data.majorRevision, items: items,
            updateTs: options.recordTs ? now : 0, author: options.recordUserId ? caller.userId : "", fence: fence)
        let started = running.context.clock.now
        let commit: MetadataCommit
        do {
            commit = try await store.write(write, to: target, limits: limits)
        } catch {
            tally.wrote(kind, after: running.context.clock.now - started, refusal: error.code)
            throw error
        }
        tally.wrote(kind, after: running.context.clock.now - started)
        await publish(commit, author: caller.userId)
        if bindsSession && running.members.ended.contains(caller.session) { await removeItems(of: caller.session) }
    }

    /// The values as they go to disk: UTF-8, sealed by the crypto side when a storage key is in force.
    private func storedValues(_ items: [MetadataItem], of target: MetadataTarget, _ running: Running) async throws(RtmError) -> [[UInt8]] {
        let plaintexts = items.map { Array($0.value.utf8) }
        guard running.sealing else { return plaintexts }
        do {
            return try await running.context.bus.request(
                SealAtRest(
                    plaintexts: plaintexts,
                    associatedData: items.map { AtRestBinding.associatedData(target, key: $0.key) }))
        } catch {
            throw RtmError(.storageOperationFailed, operation: OperationName.Crypto.sealAtRest, reason: "cannot seal the values: \(error.reason)")
        }
    }

    /// Asks the lock module whether `caller` holds `lockName` (in the acquisition of `token`, if
    /// given) and returns the acquisition's token; a refusal becomes the storage code the reference uses.
    private func checkLock(
        _ lockName: String, token: UInt64?, of channel: ChannelKey, for caller: Caller, operation: String, bus: EventBus
    ) async throws(RtmError) -> UInt64 {
        do {
            return try await bus.request(
                CheckLockHolder(caller: caller, channel: channel, lockName: lockName, fencingToken: token)
            ).fencingToken
        } catch {
            switch error.code {
            case .lockNotExist, .serviceNotSupport, .lockInvalidName:
                throw RtmError(.storageInvalidLockName, operation: operation, reason: "no lock '\(lockName)' in \(channel.name): \(error.reason)")
            default:
                throw RtmError(.storageLockNotAcquired, operation: operation, reason: "the lock '\(lockName)' is not held: \(error.reason)")
            }
        }
    }
}
