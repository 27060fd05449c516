import SwitchboardCore
import SwitchboardWire

/// The temporary states this client set, per channel, as sent (sealed when encryption is on).
///
/// In a channel the client is in, a state goes to the server at once and is kept here once the
/// server took it. For a channel it has not joined yet, the state is only kept (at most
/// `limits.presence.statesCachedBeforeJoin` keys over all such channels) and sent when the client joins.
/// After a reconnect that lost the session, the client subscribes again and then sends every kept
/// state again, so others see the join, then the state (seed 004).
final class PresenceStates: RestorableState {
    private struct Table {
        var states: [ChannelAddress: [String: String]] = [:]
        /// Channels whose kept states the server does not have yet (not joined).
        var pending: Set<ChannelAddress> = []

        var pendingCount: Int { pending.reduce(0) { $0 + (states[$1]?.count ?? 0) } }
    }

    private let table = Locked(Table())

    /// Keeps `items` for `channel`, not joined yet; refuses what the server would refuse, and more
    /// than `limits.presence.statesCachedBeforeJoin` kept keys in all (`presenceCacheTooManyStates`).
    func keepUntilJoined(_ items: [StateItem], for channel: ChannelAddress, limits: Limits) throws(RtmError) {
        let operation = SetPresenceState.operation
        try table.withLock { table throws(RtmError) in
            var merged = table.states[channel] ?? [:]
            for item in items { merged[item.key] = item.value }
            try Validation.checkWholeState(merged, limits: limits, operation: operation)
            let others = table.pendingCount - (table.pending.contains(channel) ? table.states[channel]?.count ?? 0 : 0)
            guard others + merged.count <= limits.presence.statesCachedBeforeJoin else {
                throw RtmError(
                    .presenceCacheTooManyStates, operation: operation,
                    reason: "at most \(limits.presence.statesCachedBeforeJoin) states are kept for channels not joined yet")
            }
            table.states[channel] = merged
            table.pending.insert(channel)
        }
    }

    /// Keeps `items` the server took for `channel`.
    func took(_ items: [StateItem], for channel: ChannelAddress) {
        table.withLock { table in
            for item in items { table.states[channel, default: [:]][item.key] = item.value }
        }
    }

    /// Drops `keys` (every key when empty) of `channel`.
    func remove(_ keys: [String], of channel: ChannelAddress) {
        table.withLock { table in
            if keys.isEmpty {
                table.states[channel] = nil
            } else {
                for key in keys { table.states[channel]?[key] = nil }
            }
            if table.states[channel]?.isEmpty ?? true {
                table.states[channel] = nil
                table.pending.remove(channel)
            }
        }
    }

    /// Forgets `channel` (the client left it: its states are gone on the server too).
    func forget(_ channel: ChannelAddress) { remove([], of: channel) }

    /// The states kept for `channel` before it was joined, now to be sent; nil when there are none.
    func takePending(_ channel: ChannelAddress) -> [StateItem]? {
        table.withLock { table in
            guard table.pending.remove(channel) != nil, let states = table.states[channel], !states.isEmpty else { return nil }
            return states.sorted { $0.key < $1.key }.map { StateItem(key: $0.key, value: $0.value) }
        }
    }

    // MARK: RestorableState

    /// Presence states name no channel of their own: the subscriptions list them.
    var channels: [String] { [] }

    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String] {
        let joined = table.withLock { table in
            table.states.filter { !table.pending.contains($0.key) }.sorted { $0.key.name < $1.key.name }
        }
        var unrestored: [String] = []
        for (channel, states) in joined {
            let items = states.sorted { $0.key < $1.key }.map { StateItem(key: $0.key, value: $0.value) }
            if case .failure = await send(.presence(.setState(channel: channel, items: items))) { unrestored.append(channel.name) }
        }
        return unrestored
    }

    func reset() { table.withLock { $0 = Table() } }
}
