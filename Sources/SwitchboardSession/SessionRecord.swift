import SwitchboardCore

/// Everything the server keeps about one session.
struct SessionRecord: Sendable, Hashable {
    /// App, user and session id.
    let caller: Caller
    let secret: String
    let heartbeatInterval: Int
    let presenceTimeout: Int
    /// Monotonic time of the last sign of life.
    var lastSeen: Duration
    /// Monotonic time the connection was lost; nil while the session has one.
    var suspendedAt: Duration?
    /// Unix seconds when the login privilege expires; nil when it never does.
    var tokenExpiresAt: UInt64?
    /// Whether the expiry warning was sent for the current token.
    var expiryWarned = false

    var id: SessionID { caller.session }
    var isLive: Bool { suspendedAt == nil }
    var ticket: ResumeTicket { ResumeTicket(session: id, secret: secret) }
}
