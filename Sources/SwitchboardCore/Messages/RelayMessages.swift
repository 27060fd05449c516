/// What a relay between nodes carries messages of: a message channel, or a user's channel.
///
/// On one node nothing handles the relay requests and modules deliver to their own sessions only.
/// With several nodes, a relay (the server's cluster link) handles them: it forwards what this
/// node publishes to the nodes that have listeners, and hands what they publish to this node's
/// modules (`DeliverRelayedMessage`).
public enum RelayTarget: Sendable, Hashable, CustomStringConvertible {
    /// A message channel of an app.
    case channel(ChannelKey)
    /// A user of an app: what is published to their user channel.
    case user(UserKey)

    public var description: String {
        switch self {
        case .channel(let channel): "\(channel)"
        case .user(let user): "user \(user)"
        }
    }
}

/// Makes sure messages published to `target` on any other node reach this node from now on:
/// returns once the relay will hand them over. Sent by the message router when a session of this
/// node subscribes to a channel, and by the session module when a user logs in, before either is
/// answered; the relay stops listening by itself once this node's last listener is gone.
///
/// Throws a timeout code of the operation (`channelSubscribeTimeout`, `loginTimeout`) when the
/// relay cannot listen now.
public struct OpenRelay: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.openRelay.rawValue
    /// What to listen for.
    public var target: RelayTarget
    /// Creates the request.
    public init(_ target: RelayTarget) {
        self.target = target
    }
}

/// Returns once this node has stopped listening for `target`, if it has no listener of it left:
/// sent by the session module after a logout, so that a message to a user who logged out
/// everywhere is answered `channelReceiverOffline` on every node from the logout's answer on.
public struct CloseRelay: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.closeRelay.rawValue
    /// What to stop listening for.
    public var target: RelayTarget
    /// Creates the request.
    public init(_ target: RelayTarget) {
        self.target = target
    }
}

/// Makes `caller`'s new session its user's newest login on every node: sessions of the same user
/// that logged in before it on other nodes end as replaced, as an older session on this node
/// does (their clients are told `sameUidLogin`). Sent by the session module for a new session,
/// after `OpenRelay` for the user, before the login is answered.
///
/// Throws `loginTimeout` when the relay cannot reach the other nodes now.
public struct ClaimUser: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.claimUser.rawValue
    /// The new session.
    public var caller: Caller
    /// The session's resume secret, so that another node can take it over (`AdoptSession`);
    /// nil when it may not be.
    public var secret: String?
    /// The session's presence timeout in seconds: how long, should this node die, the session
    /// waits for another node to take it over.
    public var presenceTimeout: Int
    /// Creates the request.
    public init(caller: Caller, secret: String? = nil, presenceTimeout: Int = 0) {
        self.caller = caller
        self.secret = secret
        self.presenceTimeout = presenceTimeout
    }
}

/// A session of this node that a newer login of its user on another node replaced (`ClaimUser`
/// there): the session module ends it as it ends a session replaced here, if it still exists.
/// Sent by the relay.
public struct EndReplacedSession: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.endReplacedSession.rawValue
    /// The replaced session.
    public var caller: Caller
    /// Creates the request.
    public init(caller: Caller) {
        self.caller = caller
    }
}

/// Forwards a user-channel message to the nodes holding the receiver's sessions; answers whether
/// any node took it (false: the user is online nowhere else). Sent by the message router when
/// the receiver has no session on this node.
public struct ForwardUserMessage: BusRequest, Hashable {
    public typealias Response = Bool
    public static let operation = OperationName.Messages.publish.rawValue
    /// The receiver.
    public var receiver: UserKey
    /// The message as the receiver gets it.
    public var delivery: MessageDelivery
    /// Creates the request.
    public init(receiver: UserKey, delivery: MessageDelivery) {
        self.receiver = receiver
        self.delivery = delivery
    }
}

/// A message another node accepted, to deliver to this node's listeners of `target`: the
/// subscribers of a message channel that hear messages, or the sessions of a user. Nothing more
/// is checked (the publishing node applied every rule) and nothing is forwarded again.
public struct DeliverRelayedMessage: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.deliverRelayedMessage.rawValue
    /// Whose listeners get it.
    public var target: RelayTarget
    /// The message as receivers get it.
    public var delivery: MessageDelivery
    /// Creates the request.
    public init(target: RelayTarget, delivery: MessageDelivery) {
        self.target = target
        self.delivery = delivery
    }
}

/// This node's link to the other nodes was down a while (a pub/sub gap): messages they published
/// meanwhile to `targets` (channels and users this node listens for) may not have reached it.
/// Published by the relay once the link is back; the message router tells the sessions concerned
/// (`SessionPush.messagesMayBeLost`).
public struct RelayGapped: BusEvent, Hashable {
    /// What may have missed messages.
    public var targets: [RelayTarget]
    /// Creates the event.
    public init(targets: [RelayTarget]) {
        self.targets = targets
    }
}

/// This node's link to the store the cluster's nodes share came back after a loss, and the node
/// is listed again as its users' holder. The store may have restarted with nothing kept: each
/// module whose store keeps this node's share there (memberships, states, publishers) writes back
/// what it lost. Published by the relay.
public struct SharedStoreReconnected: BusEvent, Hashable {
    /// Creates the event.
    public init() {}
}
