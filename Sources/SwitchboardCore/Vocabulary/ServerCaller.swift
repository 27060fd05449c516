/// The server's own calls (its HTTP API) go on the bus like a client's, from a caller whose
/// session is `SessionID.server`: no session module ever grants it, so no module keeps state for
/// it as it would for a client's session, and a module that lets the server do what only members
/// may (see `Caller.isServer`) recognises it.
extension SessionID {
    /// The session of the server's own calls; never given to a client (sessions count up from 1).
    public static let server = SessionID(.max)
}

extension Caller {
    /// A call the server makes in `app`, shown to clients as coming from `userId` (a message's
    /// publisher, a metadata item's author).
    public static func server(app: AppID, userId: UserID) -> Caller {
        Caller(app: app, userId: userId, session: .server)
    }

    /// Whether the server made this call (its HTTP API), not a client's session.
    public var isServer: Bool { session == .server }
}
