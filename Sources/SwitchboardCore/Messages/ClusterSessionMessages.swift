/// A user came online on the first node of the cluster (no node held a session of theirs
/// before), or went offline on the last one (`ended` says why their last session ended).
///
/// Published by the relay (the cluster link) of the node whose listing made the change, once per
/// cluster: for the user's first login, before it is answered; for the last end, once Redis took
/// the node off the user's online set; and by the node that reaped a dead node, for each user it
/// was the last to hold (`timedOut`). On one node nothing publishes it (the session events say
/// the same there).
public struct UserOnlineAcrossNodes: BusEvent, Hashable {
    /// The user.
    public var user: UserKey
    /// nil when the user came online; why their last session ended when they went offline.
    public var ended: SessionEndReason?
    /// Creates the event.
    public init(user: UserKey, ended: SessionEndReason?) {
        self.user = user
        self.ended = ended
    }
}

/// A session of a dead node was in a channel: it timed out of it when the node was reaped.
public struct ChannelMemberTimedOut: Sendable, Hashable {
    /// The channel.
    public var channel: ChannelKey
    /// The member's user id (of the channel's app).
    public var userId: UserID
    /// Creates the membership.
    public init(channel: ChannelKey, userId: UserID) {
        self.channel = channel
        self.userId = userId
    }
}

/// What the sessions of a dead node caused when they ended (their wait for a take-over ran out),
/// as their ends on that node would have: published once per cluster, on the node that ended
/// them, for those who report such ends elsewhere (the webhooks). The members on every node already heard the timeouts
/// (presence) and the listeners the metadata changes (storage); this tells nobody of them again.
public struct DeadNodeSessionsEnded: BusEvent, Hashable {
    /// The dead node's id.
    public var node: String
    /// Its sessions' channel memberships, each timed out, in the order the store ended them.
    public var timedOut: [ChannelMemberTimedOut]
    /// The metadata changes the removal of their session-bound items made.
    public var metadata: [MetadataChanged]
    /// Creates the event.
    public init(node: String, timedOut: [ChannelMemberTimedOut], metadata: [MetadataChanged]) {
        self.node = node
        self.timedOut = timedOut
        self.metadata = metadata
    }
}

/// How many users of `app` are online on some node of the cluster: the count its concurrent-user
/// limit is checked against. Answered by the relay (the cluster link) with one read of the
/// cluster's Redis; on one node nothing answers it (`SessionStatistics` counts them there).
///
/// Throws `notConnected` when the cluster's Redis cannot be read now.
public struct CountUsersAcrossNodes: BusRequest, Hashable {
    public typealias Response = Int
    public static let operation = OperationName.Relay.countUsersAcrossNodes.rawValue
    /// The app.
    public var app: AppID
    /// Creates the query.
    public init(app: AppID) { self.app = app }
}
