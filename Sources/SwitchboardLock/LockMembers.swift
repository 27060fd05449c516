import SwitchboardCore

/// Which sessions of which channels asked for lock events (the `.lock` feature).
struct LockMembers: Sendable {
    private var byChannel: [ChannelKey: Set<SessionID>] = [:]
    private var bySession: [SessionID: Set<ChannelKey>] = [:]

    /// `session` hears lock events of `channel` from now on.
    mutating func add(_ session: SessionID, to channel: ChannelKey) {
        byChannel[channel, default: []].insert(session)
        bySession[session, default: []].insert(channel)
    }

    /// `session` no longer hears lock events of `channel`.
    mutating func remove(_ session: SessionID, from channel: ChannelKey) {
        byChannel[channel]?.remove(session)
        if byChannel[channel]?.isEmpty == true { byChannel[channel] = nil }
        bySession[session]?.remove(channel)
        if bySession[session]?.isEmpty == true { bySession[session] = nil }
    }

    /// `session` hears nothing any more.
    mutating func removeAll(_ session: SessionID) {
        for channel in bySession[session] ?? [] { remove(session, from: channel) }
    }

    /// The sessions that hear lock events of `channel`, in session order.
    func receivers(of channel: ChannelKey) -> [SessionID] {
        (byChannel[channel] ?? []).sorted()
    }
}
