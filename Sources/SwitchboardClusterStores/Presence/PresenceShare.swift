import SwitchboardCore

/// What this node's sessions hold in the shared presence store, as the store last wrote or heard
/// it (a join Redis could not take included): each membership with its features, and each of
/// their users' state in the channel. It is what `RedisPresenceStore.restore()` writes back when
/// Redis lost it (restarted with nothing kept) or never had it.
///
/// A user's state is known from this node's own calls and from the published state changes this
/// node hears (those of the channels where one of its sessions listens to presence); a state the
/// server API changed on another node in a channel nobody here listens to is written back as this
/// node last knew it.
struct PresenceShare: Sendable {
    /// One membership of a session of this node.
    struct Held: Sendable, Hashable {
        var member: Caller
        var channel: ChannelKey
        var features: ChannelFeatures
        /// The member's user's state in the channel.
        var states: [String: String]
    }

    private var members: [ChannelKey: [SessionID: (member: Caller, features: ChannelFeatures)]] = [:]
    private var states: [ChannelKey: [UserID: [String: String]]] = [:]

    /// `member` is in `channel` with `features`; its user's state there is `states`.
    mutating func joined(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures, states: [String: String]) {
        members[channel, default: [:]][member.session] = (member, features)
        self.states[channel, default: [:]][member.userId] = states
    }

    /// `session` is no longer in `channel`; its user's state goes with the user's last session.
    mutating func left(_ session: SessionID, _ channel: ChannelKey) {
        guard let (member, _) = members[channel]?.removeValue(forKey: session) else { return }
        if members[channel]?.values.contains(where: { $0.member.userId == member.userId }) != true {
            states[channel]?[member.userId] = nil
        }
        if members[channel]?.isEmpty == true {
            members[channel] = nil
            states[channel] = nil
        }
    }

    /// The state of `user` in `channel` is now `states`, if a session of this node is there.
    mutating func stateChanged(of user: UserID, in channel: ChannelKey, to states: [String: String]) {
        guard self.states[channel]?[user] != nil else { return }
        self.states[channel]?[user] = states
    }

    /// The state of `user` in `channel` as last known; empty when none is.
    func states(of user: UserID, in channel: ChannelKey) -> [String: String] {
        states[channel]?[user] ?? [:]
    }

    /// Every membership held, in a stable order (by channel, then session).
    var held: [Held] {
        members.sorted { $0.key.description < $1.key.description }
            .flatMap { channel, sessions in
                sessions.sorted { $0.key < $1.key }.map { _, entry in
                    Held(
                        member: entry.member, channel: channel, features: entry.features,
                        states: states[channel]?[entry.member.userId] ?? [:])
                }
            }
    }
}
