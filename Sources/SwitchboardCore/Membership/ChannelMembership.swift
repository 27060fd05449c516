/// A module's copy of channel membership, kept from the bus by `BusSubscription.keepingMembership`
/// in the module's own mailbox: the one ordering rule every module follows.
///
/// `ChannelJoined`, `ChannelLeft` and `SessionClosed` are applied to the roster in the order they
/// were published, before the module's handler sees the change and before any request the module
/// answers with `answer` (which waits for the events published before it). A join of a session
/// that has already ended is ignored (`ended`), so a subscribe racing its session's end leaves
/// nothing behind; a leave that finds the member gone already (the routers' leaves that follow a
/// `SessionClosed`) changes nothing and is not reported.
///
/// A module that acts only on the members hearing some features keeps only those (`keeping`):
/// every membership costs memory in each module that keeps it. The other members are not in the
/// roster and their changes are not reported, except the one by which a kept member stops
/// hearing them, reported with its new features (`lost` is true for it) as it leaves the roster.
public final class ChannelMembership: Sendable {
    private let roster = PortableMutex(ChannelRoster())
    /// The features a member must hear to be kept; empty: every member is.
    public let keeping: ChannelFeatures
    /// The sessions known to have ended.
    public let ended: EndedSessions

    /// An empty membership remembering `endedCapacity` endings, of the members that hear
    /// `keeping` (by default, of every member).
    public init(endedCapacity: Int = 65_536, keeping: ChannelFeatures = []) {
        ended = EndedSessions(capacity: endedCapacity)
        self.keeping = keeping
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

    /// Applies a join; nil when it changed nothing, its session has ended or it is not kept.
    func apply(_ event: ChannelJoined) -> MembershipChange? {
        guard !ended.contains(event.caller.session) else { return nil }
        guard event.features.isSuperset(of: keeping) else {
            // A kept member that stops hearing the kept features leaves the roster, and the
            // change says what its features became.
            guard var change = roster.withLock({ $0.leave(event.caller, event.channel) }) else { return nil }
            change.after = event.features
            change.reason = nil
            return change
        }
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
