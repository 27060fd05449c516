/// Why a Redis call failed.
public enum RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an error reply: its kind (the first word: `ERR`, `WRONGTYPE`,
    /// `NOSCRIPT`, `NOAUTH`, `WRONGPASS` …) and the rest of its message.
    case reply(kind: String, message: String)
    /// There is no connection (it dropped and the client is reconnecting): the call was not sent.
    case unavailable(String)
    /// No reply came within the call's timeout. The connection was closed (a late reply would
    /// have answered the next call), so the command may or may not have run.
    case timedOut
    /// The connection closed after the call was sent and before its reply: it may or may not
    /// have run.
    case connectionLost(String)
    /// The server sent bytes that are not RESP; the connection was closed.
    case protocolViolation(String)
    /// The first connection could not be made.
    case connectFailed(String)
    /// The client was closed, or its event loop shut down.
    case closed

    /// The error of an error reply's text (`-WRONGTYPE Operation against a key …`).
    static func reply(_ text: String) -> RedisError {
        guard let space = text.firstIndex(of: " ") else { return .reply(kind: text, message: "") }
        return .reply(kind: String(text[..<space]), message: String(text[text.index(after: space)...]))
    }

    /// The kind of an error reply; nil for the other cases.
    public var replyKind: String? {
        guard case .reply(let kind, _) = self else { return nil }
        return kind
    }

    public var description: String {
        switch self {
        case .reply(let kind, let message): "Redis error reply: \(kind) \(message)"
        case .unavailable(let reason): "Redis unavailable: \(reason)"
        case .timedOut: "Redis call timed out"
        case .connectionLost(let reason): "Redis connection lost: \(reason)"
        case .protocolViolation(let reason): "Redis protocol violation: \(reason)"
        case .connectFailed(let reason): "Redis connection failed: \(reason)"
        case .closed: "Redis client closed"
        }
    }
}
