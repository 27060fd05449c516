import SwitchboardCore

/// A frame from the server: a response to a request (echoing its id) or a push (no id).
public enum ServerFrame: Sendable, Hashable {
    /// A request succeeded and has no result data (logout, heartbeat, renewToken, subscribe,
    /// unsubscribe, publish).
    case ok(id: UInt32)
    /// A login succeeded.
    case loginOk(id: UInt32, LoginGranted)
    /// A request failed.
    case error(id: UInt32, RtmError)
    /// Push: a message on a subscribed channel or the session's user channel.
    case message(MessageDelivery)
    /// Push: the session's token expires in `secondsLeft` seconds.
    case tokenPrivilegeWillExpire(secondsLeft: Int)
    /// Push: the server is about to close the connection, and why.
    case closing(reason: RtmLinkStateChangeReason, detail: String)

    /// The frame that carries `push`.
    public init(_ push: Push) {
        switch push {
        case .message(let delivery): self = .message(delivery)
        case .tokenPrivilegeWillExpire(let secondsLeft): self = .tokenPrivilegeWillExpire(secondsLeft: secondsLeft)
        }
    }

    /// The push this frame carries, if it is one of Core's `Push` kinds.
    public var push: Push? {
        switch self {
        case .message(let delivery): .message(delivery)
        case .tokenPrivilegeWillExpire(let secondsLeft): .tokenPrivilegeWillExpire(secondsLeft: secondsLeft)
        case .ok, .loginOk, .error, .closing: nil
        }
    }

    /// The id of the request this answers; nil for pushes.
    public var requestId: UInt32? {
        switch self {
        case .ok(let id), .loginOk(let id, _), .error(let id, _): id
        case .message, .tokenPrivilegeWillExpire, .closing: nil
        }
    }

    /// The `"t"` value.
    public var type: String { kind.rawValue }

    var kind: ServerFrameType {
        switch self {
        case .ok: .ok
        case .loginOk: .loginOk
        case .error: .error
        case .message: .message
        case .tokenPrivilegeWillExpire: .tokenPrivilegeWillExpire
        case .closing: .closing
        }
    }
}

/// The `"t"` values of server frames.
enum ServerFrameType: String, Sendable {
    case ok, loginOk, error, message, tokenPrivilegeWillExpire, closing
}
