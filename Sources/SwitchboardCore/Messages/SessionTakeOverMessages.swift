/// How a session moves to another node (cluster mode): its client, whose node died or stopped
/// answering, logs in on another node with its resume ticket, and that node takes the session
/// over (docs/CLUSTER.md, "Session resume on another node").
///
/// On one node nothing handles these requests and nothing publishes these events: the session
/// module resumes only sessions it holds.

/// Sets aside the numbers this node gives its sessions, so that a session's number names it on
/// every node: the session module numbers its sessions `base + 1`, `base + 2`, …, with `base`
/// the answer. Asked once, before the first session; answered by the cluster link.
public struct ReserveSessionNumbers: BusRequest, Hashable {
    public typealias Response = UInt64
    public static let operation = OperationName.Relay.reserveSessionNumbers.rawValue
    /// Creates the request.
    public init() {}
}

/// Takes over `ticket`'s session of `user` from the node that holds it, when another node holds
/// it and the ticket's secret is that session's: from now on the cluster holds it here. Answers
/// that node's id, or nil when no other node holds such a session (the login is then a new
/// session). Sent by the session module for a resume ticket it does not know; answered by the
/// cluster link. Throws `loginTimeout` when the cluster cannot be asked now.
public struct AdoptSession: BusRequest, Hashable {
    public typealias Response = String?
    public static let operation = OperationName.Relay.adoptSession.rawValue
    /// The user logging in.
    public var user: UserKey
    /// The ticket of the session to take over.
    public var ticket: ResumeTicket
    /// The session's presence timeout in seconds from now on.
    public var presenceTimeout: Int
    /// Creates the request.
    public init(user: UserKey, ticket: ResumeTicket, presenceTimeout: Int) {
        self.user = user
        self.ticket = ticket
        self.presenceTimeout = presenceTimeout
    }
}

/// A session's channel membership, as the shared stores keep it.
public struct HeldMembership: Sendable, Hashable {
    /// The channel.
    public var channel: ChannelKey
    /// The features the session has there.
    public var features: ChannelFeatures
    /// Creates a membership.
    public init(channel: ChannelKey, features: ChannelFeatures) {
        self.channel = channel
        self.features = features
    }
}

/// Moves `caller`'s share of presence (its memberships, the user's states stay the user's) from
/// `formerNode`, which held the session, to this node, with no event for anyone (the session goes
/// on); answers the channels it was in, with their features. Sent by the session module after
/// `AdoptSession`; answered by the presence module.
public struct TakeOverMemberships: BusRequest, Hashable {
    public typealias Response = [HeldMembership]
    public static let operation = OperationName.Relay.takeOverMemberships.rawValue
    /// The session, now this node's.
    public var caller: Caller
    /// The node that held it.
    public var formerNode: String
    /// Creates the request.
    public init(caller: Caller, formerNode: String) {
        self.caller = caller
        self.formerNode = formerNode
    }
}

/// Subscribes `caller` here again to the message channels among `memberships`, with their
/// features, as the session was subscribed on the node that held it; answers the channels it is
/// subscribed to now. Sent by the session module after `TakeOverMemberships`; answered by the
/// message router.
public struct RestoreSubscriptions: BusRequest, Hashable {
    public typealias Response = [ChannelKey]
    public static let operation = OperationName.Relay.restoreSubscriptions.rawValue
    /// The session, now this node's.
    public var caller: Caller
    /// What it was a member of.
    public var memberships: [HeldMembership]
    /// Creates the request.
    public init(caller: Caller, memberships: [HeldMembership]) {
        self.caller = caller
        self.memberships = memberships
    }
}

/// This node took `caller`'s session over from `formerNode`: each module whose store keeps a
/// session's share in the cluster's Redis (locks, session-bound metadata) moves it to this node,
/// with no event for anyone. Published (and waited for) by the session module before the login is
/// answered.
public struct SessionTakenOver: BusEvent, Hashable {
    /// The session, now this node's.
    public var caller: Caller
    /// The node that held it.
    public var formerNode: String
    /// Creates the event.
    public init(caller: Caller, formerNode: String) {
        self.caller = caller
        self.formerNode = formerNode
    }
}

/// Tells `formerNode` that this node holds `caller`'s session now: if it is alive it ends its own
/// copy (`EndMovedSession`), leaving the shared stores alone. Sent by the session module once
/// every store has moved the session; answered by the cluster link.
public struct AnnounceTakeOver: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.announceTakeOver.rawValue
    /// The session, now this node's.
    public var caller: Caller
    /// The node that held it.
    public var formerNode: String
    /// Creates the request.
    public init(caller: Caller, formerNode: String) {
        self.caller = caller
        self.formerNode = formerNode
    }
}

/// A session of this node that another node took over: the session module ends its copy here
/// (its old connection, if any, is told `relogin`) with `SessionEndReason.movedToAnotherNode`, so
/// the modules drop what they keep of it here and leave what the cluster shares. Sent by the
/// cluster link.
public struct EndMovedSession: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.endMovedSession.rawValue
    /// The session, as this node held it.
    public var caller: Caller
    /// Creates the request.
    public init(caller: Caller) {
        self.caller = caller
    }
}
