import SwitchboardCore
import SwitchboardWire

/// Presence: the `RtmPresence` instance and its calls, each an `RtmCall`.
extension RtmClientKit {
    /// The presence instance (`getPresence()`), for `whoNow`, `whereNow` and temporary states.
    public func getPresence() -> RtmPresence? { RtmPresence(kit: self) }

    func whoNowCall(_ channel: ChannelAddress, includeUserId: Bool, includeState: Bool, page: String) -> RtmCall<WhoNowPage> {
        let sealer = sealer
        return presenceCall(.whoNow(channel: channel, includeUserId: includeUserId, includeState: includeState, page: page)) { answer in
            guard case .whoNow(var result) = answer else { return nil }
            if let sealer { result.users = result.users.map(sealer.open) }
            return result
        }
    }

    func whereNowCall(_ userId: String) -> RtmCall<[ChannelAddress]> {
        presenceCall(.whereNow(userId: userId)) { answer in
            if case .whereNow(let channels) = answer { channels } else { nil }
        }
    }

    func getStateCall(_ channel: ChannelAddress, userId: String) -> RtmCall<UserState> {
        let sealer = sealer
        return presenceCall(.getState(channel: channel, userId: userId)) { answer in
            guard case .getState(let state) = answer else { return nil }
            return sealer?.open(state) ?? state
        }
    }

    func userPresenceCall(_ userIds: [String]) -> RtmCall<[UserPresence]> {
        presenceCall(.getUserPresence(userIds: userIds)) { answer in
            if case .getUserPresence(let users) = answer { users } else { nil }
        }
    }

    /// Sets states: sent at once in a channel the client is in, kept until it joins otherwise.
    func setStateCall(_ channel: ChannelAddress, items: [String: String]) -> RtmCall<RtmCommonResponse> {
        let (sealer, states, subscriptions, streams) = (sealer, presenceStates, subscriptions, streamChannels)
        let plain = items.sorted { $0.key < $1.key }.map { StateItem(key: $0.key, value: $0.value) }
        return RtmCall(kit: self) { engine, resolve in
            let sealed: [StateItem]
            do throws(RtmErrorInfo) {
                sealed = try sealer?.seal(plain) ?? plain
            } catch {
                return resolve(.failure(RtmErrorInfo(error.errorCode, operation: SetPresenceState.operation, reason: error.reason)))
            }
            guard Self.isJoined(channel, subscriptions, streams) else {
                do throws(RtmError) {
                    try Validation.checkStateItems(sealed, limits: Limits(), operation: SetPresenceState.operation)
                    try states.keepUntilJoined(sealed, for: channel, limits: Limits())
                } catch {
                    return resolve(.failure(RtmErrorInfo(error)))
                }
                return resolve(.success(RtmCommonResponse(channelName: channel.name)))
            }
            await engine.call(.presence(.setState(channel: channel, items: sealed))) { outcome in
                if case .success = outcome { states.took(sealed, for: channel) }
                resolve(outcome.map { _ in RtmCommonResponse(channelName: channel.name) })
            }
        }
    }

    /// Removes states: on the server in a channel the client is in, from the kept ones otherwise.
    func removeStateCall(_ channel: ChannelAddress, keys: [String]) -> RtmCall<RtmCommonResponse> {
        let (states, subscriptions, streams) = (presenceStates, subscriptions, streamChannels)
        return RtmCall(kit: self) { engine, resolve in
            guard Self.isJoined(channel, subscriptions, streams) else {
                do throws(RtmError) {
                    for key in keys { try Validation.checkStateKey(key, limits: Limits(), operation: RemovePresenceState.operation) }
                } catch {
                    return resolve(.failure(RtmErrorInfo(error)))
                }
                states.remove(keys, of: channel)
                return resolve(.success(RtmCommonResponse(channelName: channel.name)))
            }
            await engine.call(.presence(.removeState(channel: channel, keys: keys))) { outcome in
                if case .success = outcome { states.remove(keys, of: channel) }
                resolve(outcome.map { _ in RtmCommonResponse(channelName: channel.name) })
            }
        }
    }

    /// Whether the client is in `channel`, as far as this SDK knows: a subscribed message channel
    /// or a joined stream channel. Until then its states are kept.
    private static func isJoined(_ channel: ChannelAddress, _ subscriptions: ChannelSubscriptions, _ streams: StreamChannels) -> Bool {
        switch channel.type {
        case .message: subscriptions.channels.contains(channel.name)
        case .stream: streams.isJoined(channel.name)
        default: false
        }
    }

    /// A presence request whose answer `read` turns into the response (nil: an answer of another shape).
    private func presenceCall<Response: Sendable>(
        _ operation: PresenceOperation, read: @escaping @Sendable (PresenceAnswer) -> Response?
    ) -> RtmCall<Response> {
        call({ .presence(operation) }) { answer throws(RtmErrorInfo) in
            guard case .presence(let result) = answer, let response = read(result) else {
                throw RtmErrorInfo(.presenceOperationFailed, operation: operation.name, reason: "unexpected answer")
            }
            return response
        }
    }
}

extension PresenceStates {
    /// Sends the states kept for `channel` before it was joined. Those the server refuses are
    /// dropped, so they are not sent again after a reconnect.
    func sendPending(_ channel: ChannelAddress, on engine: ClientEngine) async {
        guard let items = takePending(channel) else { return }
        let answered = OneShot<Result<Answer, RtmErrorInfo>>()
        await engine.call(.presence(.setState(channel: channel, items: items))) { answered.fulfil($0) }
        if case .failure = await answered.value { remove(items.map(\.key), of: channel) }
    }
}
