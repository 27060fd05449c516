import SwitchboardCore

/// A request from a client to the server; each carries an id that the response echoes.
public enum ClientFrame: Sendable, Hashable {
    /// Log in, or resume a session kept since the connection dropped. Must be the first request.
    case login(
        id: UInt32, appId: String, userId: UserID, token: String, heartbeatInterval: Int,
        presenceTimeout: Int, resume: ResumeTicket?)
    /// End the session now.
    case logout(id: UInt32)
    /// The client is alive; the server answers `ok` (the pong).
    case heartbeat(id: UInt32)
    /// Replace the session's token.
    case renewToken(id: UInt32, token: String)
    /// Subscribe to a message channel.
    case subscribe(id: UInt32, channel: String, features: RtmSubscribeChannelFeature)
    /// Unsubscribe from a message channel.
    case unsubscribe(id: UInt32, channel: String)
    /// Publish to a message channel (`.message`) or send to a user (`.user`).
    case publish(
        id: UInt32, channelType: RtmChannelType, channel: String, message: MessagePayload,
        customType: String)

    /// The request id.
    public var id: UInt32 {
        switch self {
        case .login(let id, _, _, _, _, _, _), .logout(let id), .heartbeat(let id),
            .renewToken(let id, _), .subscribe(let id, _, _), .unsubscribe(let id, _),
            .publish(let id, _, _, _, _):
            id
        }
    }

    /// The `"t"` value, which is also the operation name errors report.
    public var type: String { kind.rawValue }

    var kind: ClientFrameType {
        switch self {
        case .login: .login
        case .logout: .logout
        case .heartbeat: .heartbeat
        case .renewToken: .renewToken
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .publish: .publish
        }
    }
}

/// The `"t"` values of client frames.
enum ClientFrameType: String, Sendable {
    case login, logout, heartbeat, renewToken, subscribe, unsubscribe, publish
}
