import SwitchboardCore

/// Everything the server keeps about one session.
struct SessionRecord: Sendable, Hashable {
    let id: SessionID
    let userId: UserID
    let appId: String
    let secret: String
    /// The live connection; nil while suspended.
    var connection: ConnectionID?
    let heartbeatInterval: Int
    let presenceTimeout: Int
    /// Monotonic time of the last sign of life.
    var lastSeen: Duration
    /// Monotonic time the connection was lost; nil while live.
    var suspendedAt: Duration?
    /// Unix seconds when the login privilege expires; nil when it never does.
    var tokenExpiresAt: UInt64?
    /// Whether the expiry warning was sent for the current token.
    var expiryWarned = false

    var ticket: ResumeTicket { ResumeTicket(session: id, secret: secret) }
}
