/// A module's copy of channel membership, kept from the bus by `BusSubscription.keepingMembership`
/// in the module's own mailbox: the one ordering rule every module follows.
///
/// `ChannelJoined`, `ChannelLeft` and `SessionClosed` are applied to the roster in the order they
/// were published, before the module's handler sees the change and before any request the module
/// answers with `answer` (which waits for the events published before it). A join of a session
/// that has already ended is ignored (`ended`), so a subscribe racing its session's end leaves
/// nothing behind; a leave that finds the member gone already (the routers' leaves that follow a
/// `SessionClosed`) changes nothing and is not reported.
public final class ChannelMembership: Sendable {
    private let roster = PortableMutex(ChannelRoster())
    /// The sessions known to have ended.
    public let ended: EndedSessions

    /// An empty membership remembering `endedCapacity` endings.
    public init(endedCapacity: Int = 65_536) {
        ended = EndedSessions(capacity: endedCapacity)
    }

    /// Reads the roster (listener lists are cached as they are asked for, hence `inout`).
    public func read<T>(_ body: (inout ChannelRoster) -> T) -> T {
        roster.withLock { body(&$0) }
    }

    /// Whether `session` is in `channel`.
    public func contains(_ session: SessionID, in channel: ChannelKey) -> Bool {
        read { $0.contains(session, in: channel) }
    }

    /// The roster's version now: what an operation beginning now would see.
    public var version: UInt64 { read { $0.version } }

    /// Applies a join; nil when it changed nothing or its session has ended.
    func apply(_ event: ChannelJoined) -> MembershipChange? {
        guard !ended.contains(event.caller.session) else { return nil }
        return roster.withLock { $0.join(event.caller, event.channel, features: event.features) }
    }

    /// Applies a leave; nil when the member was not there.
    func apply(_ event: ChannelLeft) -> MembershipChange? {
        roster.withLock { $0.leave(event.caller, event.channel, reason: event.reason) }
    }

    /// Records the end and applies the leaves it causes.
    func apply(_ event: SessionClosed) -> [MembershipChange] {
        ended.record(event.session)
        return roster.withLock { $0.end(event.caller, reason: event.reason) }
    }
}

/// What `keepingMembership` tells a module, once the roster has been changed.
public enum MembershipUpdate: Sendable {
    /// A member joined, changed its features or left a channel.
    case changed(MembershipChange)
    /// A session ended; `left` are the channels it was in, now left (possibly none).
    case sessionEnded(SessionClosed, left: [MembershipChange])
}

extension BusSubscription {
    /// Keeps `membership` from this subscription's `ChannelJoined`, `ChannelLeft` and
    /// `SessionClosed`, in publish order with its other events, then hands `handler` what changed
    /// (see `ChannelMembership` for the rule).
    @discardableResult
    public func keepingMembership(
        _ membership: ChannelMembership, _ handler: @escaping @Sendable (MembershipUpdate) async -> Void
    ) -> BusSubscription {
        // A session opened here again (taken over from another node) is no longer ended.
        bus?.observe(SessionOpened.self) { event in membership.ended.forget(event.caller.session) }
        return on(ChannelJoined.self) { event in
            if let change = membership.apply(event) { await handler(.changed(change)) }
        }
        .on(ChannelLeft.self) { event in
            if let change = membership.apply(event) { await handler(.changed(change)) }
        }
        .on(SessionClosed.self) { event in
            await handler(.sessionEnded(event, left: membership.apply(event)))
        }
    }
}
