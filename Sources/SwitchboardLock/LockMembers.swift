import SwitchboardCore

/// Who is in which channel (subscribed to a message channel, joined to a stream channel), which
/// lock requests need, and which of them asked for lock events (the `.lock` feature).
///
/// Compact sets: most channels have few members and most sessions are in few channels.
struct LockMembers: Sendable {
    private var members: [ChannelKey: CompactSet<SessionID>] = [:]
    private var listeners: [ChannelKey: CompactSet<SessionID>] = [:]
    private var bySession: [SessionID: CompactSet<ChannelKey>] = [:]

    /// `session` is in `channel` from now on.
    mutating func enter(_ session: SessionID, _ channel: ChannelKey) {
        members[channel, default: []].insert(session)
        bySession[session, default: []].insert(channel)
    }

    /// `session`, in `channel`, hears its lock events from now on (`listening`) or no longer.
    mutating func listen(_ session: SessionID, to channel: ChannelKey, _ listening: Bool) {
        if listening {
            listeners[channel, default: []].insert(session)
        } else {
            listeners.remove(session, fromSetAt: channel)
        }
    }

    /// `session` left `channel`.
    mutating func leave(_ session: SessionID, _ channel: ChannelKey) {
        members.remove(session, fromSetAt: channel)
        listeners.remove(session, fromSetAt: channel)
        bySession.remove(channel, fromSetAt: session)
    }

    /// `session` ended: it is in no channel any more. Returns the channels it was in.
    mutating func leaveAll(_ session: SessionID) -> CompactSet<ChannelKey> {
        let channels = bySession[session] ?? []
        for channel in channels { leave(session, channel) }
        return channels
    }

    /// Whether `session` is in `channel`.
    func contains(_ session: SessionID, in channel: ChannelKey) -> Bool {
        members[channel]?.contains(session) ?? false
    }

    /// Whether nobody is in `channel`.
    func isEmpty(_ channel: ChannelKey) -> Bool { members[channel] == nil }

    /// The sessions that hear lock events of `channel`, in session order.
    func receivers(of channel: ChannelKey) -> [SessionID] {
        (listeners[channel] ?? []).sorted()
    }
}
