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
/// A module that must still know every member (to let only members call it, to act on every
/// leave) says `knowingEveryMember`: the others are then remembered as their session, channel and
/// features only (about a third of a roster entry), `contains` answers for them, and every change
/// of theirs is reported; the roster's queries (`listeners`, `members(of:)`, `channels(of:)`)
/// still name only the kept members.
public final class ChannelMembership: Sendable {
    private struct Members {
        var roster = ChannelRoster()
        /// The members not kept, when every member is known.
        var passing = PassingMembers()
    }
    private let members = PortableMutex(Members())
    /// The features a member must hear to be kept; empty: every member is.
    public let keeping: ChannelFeatures
    /// Whether the members not kept are known too (see the type's summary).
    public let knowsEveryMember: Bool
    /// The sessions known to have ended.
    public let ended: EndedSessions

    /// An empty membership remembering `endedCapacity` endings, of the members that hear
    /// `keeping` (by default, of every member); with `knowingEveryMember`, the others are known
    /// too, without their details.
    public init(endedCapacity: Int = 65_536, keeping: ChannelFeatures = [], knowingEveryMember: Bool = false) {
        ended = EndedSessions(capacity: endedCapacity)
        self.keeping = keeping
        knowsEveryMember = knowingEveryMember && !keeping.isEmpty
    }

    /// Reads the roster of kept members (listener lists are cached as they are asked for, hence
    /// `inout`).
    public func read<T>(_ body: (inout ChannelRoster) -> T) -> T {
        members.withLock { body(&$0.roster) }
    }

    /// Whether `session` is in `channel` (kept or, when every member is known, not).
    public func contains(_ session: SessionID, in channel: ChannelKey) -> Bool {
        members.withLock { $0.roster.contains(session, in: channel) || $0.passing.features(of: session, in: channel) != nil }
    }

    /// The roster's version now: what an operation beginning now would see.
    public var version: UInt64 { read { $0.version } }

    /// Applies a join; nil when it changed nothing, its session has ended or it is not kept
    /// (and not known).
    func apply(_ event: ChannelJoined) -> MembershipChange? {
        guard !ended.contains(event.caller.session) else { return nil }
        let member = event.caller, channel = event.channel, features = event.features
        let knowsEveryMember = knowsEveryMember
        guard features.isSuperset(of: keeping) else {
            return members.withLock { members -> MembershipChange? in
                // A kept member that stops hearing the kept features leaves the roster, and the
                // change says what its features became.
                if var change = members.roster.leave(member, channel) {
                    change.after = features
                    change.reason = nil
                    if knowsEveryMember { members.passing.set(features, of: member.session, in: channel) }
                    return change
                }
                guard knowsEveryMember else { return nil }
                let before = members.passing.set(features, of: member.session, in: channel)
                guard before != features else { return nil }
                return MembershipChange(
                    member: member, channel: channel, before: before, after: features, version: members.roster.version)
            }
        }
        return members.withLock { members -> MembershipChange? in
            let passed = knowsEveryMember ? members.passing.remove(member.session, from: channel) : nil
            guard var change = members.roster.join(member, channel, features: features) else { return nil }
            if let passed { change.before = passed }
            return change
        }
    }

    /// Applies a leave; nil when the member was not there.
    func apply(_ event: ChannelLeft) -> MembershipChange? {
        members.withLock { members in
            if let change = members.roster.leave(event.caller, event.channel, reason: event.reason) { return change }
            guard let before = members.passing.remove(event.caller.session, from: event.channel) else { return nil }
            return MembershipChange(
                member: event.caller, channel: event.channel, before: before, after: nil, reason: event.reason,
                version: members.roster.version)
        }
    }

    /// Records the end and applies the leaves it causes, by channel type, then name.
    func apply(_ event: SessionClosed) -> [MembershipChange] {
        ended.record(event.session)
        return members.withLock { members in
            let kept = members.roster.end(event.caller, reason: event.reason)
            let passing = members.passing.removeAll(of: event.session)
            guard !passing.isEmpty else { return kept }
            let version = members.roster.version
            let others = passing.map { channel, features in
                MembershipChange(
                    member: event.caller, channel: channel, before: features, after: nil,
                    reason: .sessionClosed(event.reason), version: version)
            }
            return (kept + others).sorted { ($0.channel.type.rawValue, $0.channel.name) < ($1.channel.type.rawValue, $1.channel.name) }
        }
    }
}

/// The members a `ChannelMembership` knows without keeping their details: per session, the
/// channels it is in and its features there, a session in one channel held inline.
struct PassingMembers: Sendable {
    private var bySession: [SessionID: CompactDictionary<ChannelKey, ChannelFeatures>] = [:]

    /// The features `session` has in `channel`, if it is there.
    func features(of session: SessionID, in channel: ChannelKey) -> ChannelFeatures? {
        bySession[session]?[channel]
    }

    /// Records `session` in `channel` with `features`; returns the features it had there.
    @discardableResult
    mutating func set(_ features: ChannelFeatures, of session: SessionID, in channel: ChannelKey) -> ChannelFeatures? {
        let before = bySession[session]?[channel]
        bySession[session, default: [:]][channel] = features
        return before
    }

    /// Takes `session` out of `channel`; returns the features it had there.
    mutating func remove(_ session: SessionID, from channel: ChannelKey) -> ChannelFeatures? {
        guard let removed = bySession[session]?.removeValue(forKey: channel) else { return nil }
        if bySession[session]?.isEmpty == true { bySession[session] = nil }
        return removed
    }

    /// Takes `session` out of every channel; returns them with the features it had.
    mutating func removeAll(of session: SessionID) -> [(channel: ChannelKey, features: ChannelFeatures)] {
        (bySession.removeValue(forKey: session) ?? [:]).map { ($0.key, $0.value) }
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
