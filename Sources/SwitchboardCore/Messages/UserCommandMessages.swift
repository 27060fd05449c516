/// What the server API does to a user's sessions.
public enum UserCommand: Sendable, Hashable {
    /// End every session of the user, each client told `detail` (`DisconnectUser`).
    case disconnect(detail: String)
    /// Unsubscribe every session of the user from the message channel named (`UnsubscribeUser`).
    case unsubscribe(channelName: String)

    /// Carries the command out on the sessions of `userId` (of `caller`'s app) that `bus`'s
    /// modules keep, as the server API of one node does; how many sessions it acted on.
    public func carryOut(on bus: EventBus, caller: Caller, userId: UserID) async throws(RtmError) -> Int {
        switch self {
        case .disconnect(let detail): try await bus.request(DisconnectUser(caller: caller, userId: userId, detail: detail))
        case .unsubscribe(let channelName): try await bus.request(UnsubscribeUser(caller: caller, channelName: channelName, userId: userId))
        }
    }
}

/// Carries `command` out on the sessions of `userId` (of the caller's app) on every node of the
/// cluster, this one included, and answers how many sessions it acted on. Answered by the relay
/// (the cluster link): it publishes the command on the user's channel, which the nodes holding
/// sessions of the user listen to; each carries it out with its own modules and answers; the
/// relay waits for as many answers as Redis counted receivers, for a bounded time. On one node
/// nothing answers it: the server API sends `DisconnectUser` or `UnsubscribeUser` itself.
///
/// When no node acted, it throws what one node would (a node's refusal, such as
/// `channelNotSubscribed`, or this node's answer when the user is online on no node); it throws
/// `notConnected` when the cluster's Redis cannot be reached.
public struct CommandUserAcrossNodes: BusRequest, Hashable {
    public typealias Response = UserCommandTally
    public static let operation = OperationName.Relay.commandUserAcrossNodes.rawValue
    /// The server's caller for the user's app.
    public var caller: Caller
    /// The user whose sessions the command acts on.
    public var userId: UserID
    /// What to do.
    public var command: UserCommand
    /// Creates the request.
    public init(caller: Caller, userId: UserID, command: UserCommand) {
        self.caller = caller
        self.userId = userId
        self.command = command
    }
}

/// What a command on a user's sessions did across the nodes.
public struct UserCommandTally: Sendable, Hashable {
    /// The sessions it acted on, over every node that answered.
    public var sessions: Int
    /// The nodes that heard it and did not answer in time (what they did is not counted).
    public var unanswered: Int
    /// Creates a tally.
    public init(sessions: Int, unanswered: Int = 0) {
        self.sessions = sessions
        self.unanswered = unanswered
    }
}
