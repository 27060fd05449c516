import SwitchboardCore

/// Who hears the messages of each message channel: the index a publish reads, kept from the
/// subscription store's changes and holding nothing else.
///
/// It is kept lean because every subscription costs an entry here: a channel with one listener
/// (most have one) holds it inline, with no allocation; a larger one keeps a set and, once a
/// publish asks, the sorted list every publish after it reads until the channel changes.
struct MessageListeners: Sendable {
    private enum Entry: Sendable {
        case one(SessionID)
        /// The listeners, and their sorted list once asked for (nil after a change).
        case many(Set<SessionID>, sorted: [SessionID]?)
    }

    private var channels: [ChannelKey: Entry] = [:]

    /// No channel has listeners.
    init() {}

    /// Applies a change of one subscription: its session hears the channel's messages from now on
    /// when its features include them, and no longer otherwise.
    mutating func apply(_ change: MembershipChange) {
        if change.after?.contains(.message) == true {
            insert(change.member.session, into: change.channel)
        } else {
            remove(change.member.session, from: change.channel)
        }
    }

    /// The listeners of `channel`, in session order; asked again before the channel changes, the
    /// same list (its storage too).
    mutating func listeners(of channel: ChannelKey) -> Listeners {
        switch channels[channel] {
        case nil: return .list([])
        case .one(let session): return .one(session)
        case .many(_, let sorted?): return .list(sorted)
        case .many(let sessions, nil):
            let sorted = sessions.sorted()
            channels[channel] = .many(sessions, sorted: sorted)
            return .list(sorted)
        }
    }

    /// How many channels have listeners.
    var channelCount: Int { channels.count }

    // The entry is taken out while it changes, so that its set is changed in place, not copied.

    private mutating func insert(_ session: SessionID, into channel: ChannelKey) {
        switch channels.removeValue(forKey: channel) {
        case nil:
            channels[channel] = .one(session)
        case .one(let only):
            channels[channel] = only == session ? .one(only) : .many([only, session], sorted: nil)
        case .many(var sessions, let sorted):
            let inserted = sessions.insert(session).inserted
            channels[channel] = .many(sessions, sorted: inserted ? nil : sorted)
        }
    }

    private mutating func remove(_ session: SessionID, from channel: ChannelKey) {
        switch channels.removeValue(forKey: channel) {
        case nil:
            return
        case .one(let only):
            if only != session { channels[channel] = .one(only) }
        case .many(var sessions, let sorted):
            let removed = sessions.remove(session) != nil
            channels[channel] = sessions.count == 1 ? .one(sessions.first!) : .many(sessions, sorted: removed ? nil : sorted)
        }
    }
}

/// Who a publish goes to: one session (no list to build), or a list in session order.
enum Listeners: Sendable {
    case one(SessionID)
    case list([SessionID])

    /// How many sessions.
    var count: Int {
        switch self {
        case .one: 1
        case .list(let sessions): sessions.count
        }
    }

    /// The sessions as a list.
    var sessions: [SessionID] {
        switch self {
        case .one(let session): [session]
        case .list(let sessions): sessions
        }
    }
}
