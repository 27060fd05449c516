/// One change of one session's membership of one channel: a join, a change of features, or a
/// leave, with the features before and after.
public struct MembershipChange: Sendable, Hashable {
    /// The member.
    public var member: Caller
    /// The channel.
    public var channel: ChannelKey
    /// The features the member had; nil when it was not a member.
    public var before: ChannelFeatures?
    /// The features it has now; nil when it is no longer a member.
    public var after: ChannelFeatures?
    /// Why it left (nil for a join or a change of features).
    public var reason: ChannelLeaveReason?
    /// The roster's version once this change was applied (see `ChannelRoster.version`).
    public var version: UInt64

    /// Creates a change.
    public init(
        member: Caller, channel: ChannelKey, before: ChannelFeatures?, after: ChannelFeatures?,
        reason: ChannelLeaveReason? = nil, version: UInt64
    ) {
        self.member = member
        self.channel = channel
        self.before = before
        self.after = after
        self.reason = reason
        self.version = version
    }

    /// Whether the member came in with this change.
    public var isJoin: Bool { before == nil && after != nil }
    /// Whether the member went out with this change.
    public var isLeave: Bool { before != nil && after == nil }
    /// Whether the member hears `feature` after this change and did not before.
    public func gained(_ feature: ChannelFeatures) -> Bool {
        after?.isSuperset(of: feature) == true && before?.isSuperset(of: feature) != true
    }
    /// Whether the member heard `feature` before this change and does not after.
    public func lost(_ feature: ChannelFeatures) -> Bool {
        before?.isSuperset(of: feature) == true && after?.isSuperset(of: feature) != true
    }
}

/// Who is in which channel with which features, and which channels each session is in: the one
/// model of channel membership every module keeps (message channels subscribed, stream channels
/// joined), as a pure value. Keyed by `ChannelKey`, so by app.
///
/// Every change returns what it changed and bumps `version`; a member remembers the version at
/// which its features last changed, so `listeners(of:hearing:asOf:)` can answer who heard a
/// feature when an operation began (a member that joins while an operation is under way hears of
/// it from its snapshot, not from the operation's events). Listener lists are cached per channel
/// and feature until the channel changes, so a fan-out that asks again gets the same array.
public struct ChannelRoster: Sendable {
    private struct Member: Sendable {
        var user: UserID
        var features: ChannelFeatures
        /// The features before the last change (empty for a join).
        var previous: ChannelFeatures
        /// The roster's version at the last change.
        var since: UInt64
    }

    private struct Channel: Sendable {
        var members: CompactDictionary<SessionID, Member> = [:]
        /// Listeners by feature, sorted by session; emptied whenever a member changes.
        var listeners: [(feature: ChannelFeatures, sessions: [SessionID])] = []
        /// The roster's version at the channel's last change.
        var lastChange: UInt64 = 0
    }

    /// Whose channels a tally counts.
    private struct TallyKey: Hashable {
        let app: AppID
        let type: RtmChannelType
    }

    private var channels: [ChannelKey: Channel] = [:]
    private var bySession: [SessionID: CompactSet<ChannelKey>] = [:]
    /// Channels and members per app and channel type, kept with every join and leave.
    private var tallies: [TallyKey: MembershipCount] = [:]
    /// How many changes were applied so far; every change increments it.
    public private(set) var version: UInt64 = 0

    /// An empty roster.
    public init() {}

    // MARK: Changes

    /// `member` is in `channel` with `features` from now on (joined, or joined again with other
    /// features). Nil when it already was, with the same features.
    @discardableResult
    public mutating func join(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures) -> MembershipChange? {
        let before = channels[channel]?.members[member.session]?.features
        guard before != features else { return nil }
        version += 1
        if before == nil {
            tallies[TallyKey(app: channel.app, type: channel.type), default: MembershipCount()].add(
                channels: channels[channel] == nil ? 1 : 0, members: 1)
        }
        channels[channel, default: Channel()].members[member.session] = Member(
            user: member.userId, features: features, previous: before ?? [], since: version)
        touch(channel)
        bySession[member.session, default: []].insert(channel)
        return MembershipChange(member: member, channel: channel, before: before, after: features, version: version)
    }

    /// `member` left `channel`; nil when it was not in it.
    @discardableResult
    public mutating func leave(
        _ member: Caller, _ channel: ChannelKey, reason: ChannelLeaveReason = .left
    ) -> MembershipChange? {
        guard let gone = channels[channel]?.members.removeValue(forKey: member.session) else { return nil }
        version += 1
        let emptied = channels[channel]?.members.isEmpty == true
        if emptied {
            channels[channel] = nil
        } else {
            touch(channel)
        }
        let tally = TallyKey(app: channel.app, type: channel.type)
        tallies[tally]?.add(channels: emptied ? -1 : 0, members: -1)
        if tallies[tally]?.members == 0 { tallies[tally] = nil }
        bySession.remove(channel, fromSetAt: member.session)
        return MembershipChange(
            member: member, channel: channel, before: gone.features, after: nil, reason: reason, version: version)
    }

    /// `member`'s session ended: it leaves every channel it is in. Returns the leaves, by
    /// channel type, then name.
    public mutating func end(_ member: Caller, reason: SessionEndReason) -> [MembershipChange] {
        channels(of: member.session).compactMap { leave(member, $0, reason: .sessionClosed(reason)) }
    }

    private mutating func touch(_ channel: ChannelKey) {
        channels[channel]?.listeners.removeAll()
        channels[channel]?.lastChange = version
    }

    // MARK: Queries

    /// The features `session` has in `channel`; nil when it is not a member.
    public func features(of session: SessionID, in channel: ChannelKey) -> ChannelFeatures? {
        channels[channel]?.members[session]?.features
    }

    /// Whether `session` is in `channel`.
    public func contains(_ session: SessionID, in channel: ChannelKey) -> Bool {
        channels[channel]?.members[session] != nil
    }

    /// Whether nobody is in `channel`.
    public func isEmpty(_ channel: ChannelKey) -> Bool { channels[channel] == nil }

    /// How many sessions are in `channel`.
    public func memberCount(of channel: ChannelKey) -> Int { channels[channel]?.members.count ?? 0 }

    /// The members of `channel` with their user ids, in session order.
    public func members(of channel: ChannelKey) -> [(session: SessionID, user: UserID, features: ChannelFeatures)] {
        (channels[channel]?.members ?? [:]).map { ($0.key, $0.value.user, $0.value.features) }.sorted { $0.session < $1.session }
    }

    /// Different users among the members of `channel`.
    public func userCount(of channel: ChannelKey) -> Int {
        Set((channels[channel]?.members ?? [:]).map(\.value.user)).count
    }

    /// The channels of `app` with members, of `type` (nil: any), whose names match `pattern`; in
    /// no particular order.
    public func channels(in app: AppID, type: RtmChannelType?, matching pattern: ChannelPattern) -> [ChannelKey] {
        channels.keys.filter { $0.app == app && (type == nil || $0.type == type) && pattern.matches($0.name) }
    }

    /// Channels with members and their members, by channel type, in `app` or (nil) every app.
    public func counts(in app: AppID?) -> [RtmChannelType: MembershipCount] {
        var counts: [RtmChannelType: MembershipCount] = [:]
        for (key, tally) in tallies where app == nil || key.app == app {
            counts[key.type, default: MembershipCount()].add(channels: tally.channels, members: tally.members)
        }
        return counts
    }

    /// The channels `session` is in, by channel type, then name.
    public func channels(of session: SessionID) -> [ChannelKey] {
        (bySession[session] ?? []).sorted { ($0.type.rawValue, $0.name, $0.app) < ($1.type.rawValue, $1.name, $1.app) }
    }

    /// How many channels `session` is in.
    public func channelCount(of session: SessionID) -> Int { bySession[session]?.count ?? 0 }

    /// The members of `channel` whose features include `feature`, in session order. Asked again
    /// before the channel changes, it answers the same array (its storage too).
    public mutating func listeners(of channel: ChannelKey, hearing feature: ChannelFeatures) -> [SessionID] {
        guard let entry = channels[channel] else { return [] }
        if let cached = entry.listeners.first(where: { $0.feature == feature }) { return cached.sessions }
        let sessions = entry.members.compactMap { $0.value.features.isSuperset(of: feature) ? $0.key : nil }.sorted()
        channels[channel]?.listeners.append((feature, sessions))
        return sessions
    }

    /// The members of `channel` that heard `feature` when the roster was at `version`, and still
    /// are members now, in session order: a member whose features changed later is judged by
    /// the features it had before that change.
    public mutating func listeners(of channel: ChannelKey, hearing feature: ChannelFeatures, asOf version: UInt64) -> [SessionID] {
        guard let entry = channels[channel] else { return [] }
        guard entry.lastChange > version else { return listeners(of: channel, hearing: feature) }
        return entry.members.compactMap { session, member in
            let features = member.since <= version ? member.features : member.previous
            return features.isSuperset(of: feature) ? session : nil
        }.sorted()
    }
}

/// Channels with members, and their members (sessions), counted.
public struct MembershipCount: Sendable, Hashable {
    /// Channels with at least one member.
    public var channels: Int
    /// Memberships: a session in two channels counts twice.
    public var members: Int
    /// Creates counts.
    public init(channels: Int = 0, members: Int = 0) {
        self.channels = channels
        self.members = members
    }

    /// Adds (or, negative, takes away) channels and members.
    mutating func add(channels: Int, members: Int) {
        self.channels += channels
        self.members += members
    }
}
