/// Lets a reconnecting client take its session back within the presence timeout.
public struct ResumeTicket: Sendable, Hashable {
    /// The session to resume.
    public let session: SessionID
    /// A secret only that session's client knows.
    public let secret: String
    /// How many pushes of this session the client has received, on every connection so far; the
    /// server sends again the recent ones past this count (those lost on a half-open connection).
    public var received: UInt64
    /// Creates a ticket.
    public init(session: SessionID, secret: String, received: UInt64 = 0) {
        self.session = session
        self.secret = secret
        self.received = received
    }
}

/// Log in (or resume) on a connection.
public struct Login: BusRequest {
    public typealias Response = LoginGranted
    public static let operation = "login"
    /// The connection the client logs in on.
    public var connection: ConnectionID
    /// The app id from the client's config.
    public var appId: String
    /// The user id from the client's config.
    public var userId: UserID
    /// The token; empty in development mode.
    public var token: String
    /// The client's `heartbeatInterval` in seconds (clamped by the server).
    public var heartbeatInterval: Int
    /// The client's `presenceTimeout` in seconds (clamped by the server).
    public var presenceTimeout: Int
    /// Present when the client reconnects to a session it had.
    public var resume: ResumeTicket?

    /// Creates a login request.
    public init(
        connection: ConnectionID, appId: String, userId: UserID, token: String,
        heartbeatInterval: Int = 0, presenceTimeout: Int = 0, resume: ResumeTicket? = nil
    ) {
        self.connection = connection
        self.appId = appId
        self.userId = userId
        self.token = token
        self.heartbeatInterval = heartbeatInterval
        self.presenceTimeout = presenceTimeout
        self.resume = resume
    }
}

/// The answer to a login.
public struct LoginGranted: Sendable, Hashable {
    /// The session, new or resumed.
    public var session: SessionID
    /// The ticket to resume this session later.
    public var ticket: ResumeTicket
    /// True when an existing session was resumed.
    public var resumed: Bool
    /// The heartbeat interval in force, in seconds.
    public var heartbeatInterval: Int
    /// The presence timeout in force, in seconds.
    public var presenceTimeout: Int
    /// What a resume could not restore.
    public var loss: ResumeLoss

    /// Creates a grant.
    public init(
        session: SessionID, ticket: ResumeTicket, resumed: Bool, heartbeatInterval: Int,
        presenceTimeout: Int, loss: ResumeLoss
    ) {
        self.session = session
        self.ticket = ticket
        self.resumed = resumed
        self.heartbeatInterval = heartbeatInterval
        self.presenceTimeout = presenceTimeout
        self.loss = loss
    }
}

/// End a session now, with no grace.
public struct Logout: BusRequest {
    public typealias Response = Done
    public static let operation = "logout"
    /// The session to end.
    public var session: SessionID
    /// Creates a logout request.
    public init(session: SessionID) { self.session = session }
}

/// The client is alive (a heartbeat ping).
public struct Heartbeat: BusRequest {
    public typealias Response = Done
    public static let operation = "heartbeat"
    /// The session that sent it.
    public var session: SessionID
    /// Creates a heartbeat.
    public init(session: SessionID) { self.session = session }
}

/// Replace the session's token.
public struct RenewToken: BusRequest {
    public typealias Response = Done
    public static let operation = "renewToken"
    /// The session.
    public var session: SessionID
    /// The new token.
    public var token: String
    /// Creates a renewal.
    public init(session: SessionID, token: String) {
        self.session = session
        self.token = token
    }
}

/// Which sessions (live or awaiting resume) a user has.
public struct SessionsOfUser: BusRequest {
    public typealias Response = [SessionID]
    public static let operation = "sessionsOfUser"
    /// The user.
    public var userId: UserID
    /// Creates the query.
    public init(userId: UserID) { self.userId = userId }
}

/// A transport connection closed (socket closed, protocol error, slow consumer …).
public struct ConnectionDropped: BusEvent, Hashable {
    /// The connection.
    public var connection: ConnectionID
    /// The session it carried, if it had logged in.
    public var session: SessionID?
    /// Creates the event.
    public init(connection: ConnectionID, session: SessionID?) {
        self.connection = connection
        self.session = session
    }
}

/// A session started.
public struct SessionOpened: BusEvent, Hashable {
    public var session: SessionID
    public var userId: UserID
    public var connection: ConnectionID
    /// Creates the event.
    public init(session: SessionID, userId: UserID, connection: ConnectionID) {
        self.session = session
        self.userId = userId
        self.connection = connection
    }
}

/// A session lost its connection and waits, for its presence timeout, to be resumed.
public struct SessionSuspended: BusEvent, Hashable {
    public var session: SessionID
    public var userId: UserID
    /// Creates the event.
    public init(session: SessionID, userId: UserID) {
        self.session = session
        self.userId = userId
    }
}

/// A suspended session was resumed on a new connection.
public struct SessionResumed: BusEvent, Hashable {
    public var session: SessionID
    public var userId: UserID
    public var connection: ConnectionID
    /// Creates the event.
    public init(session: SessionID, userId: UserID, connection: ConnectionID) {
        self.session = session
        self.userId = userId
        self.connection = connection
    }
}

/// A suspended session was not resumed within its presence timeout.
public struct SessionTimedOut: BusEvent, Hashable {
    public var session: SessionID
    public var userId: UserID
    /// Creates the event.
    public init(session: SessionID, userId: UserID) {
        self.session = session
        self.userId = userId
    }
}

/// Why a session ended.
public enum SessionEndReason: Sendable, Hashable {
    /// The client logged out.
    case logout
    /// It was not resumed within its presence timeout.
    case timedOut
    /// A second login with the same user id replaced it.
    case replacedBySameUser
    /// Its token expired.
    case tokenExpired
    /// The server is shutting down.
    case serverShutdown
}

/// A session ended; everything it held is to be released.
public struct SessionClosed: BusEvent, Hashable {
    public var session: SessionID
    public var userId: UserID
    public var reason: SessionEndReason
    /// Creates the event.
    public init(session: SessionID, userId: UserID, reason: SessionEndReason) {
        self.session = session
        self.userId = userId
        self.reason = reason
    }
}

/// Check a login token. Handled by the crypto module when app certificates are configured; with
/// no handler on the bus every token is accepted (development mode).
public struct VerifyLoginToken: BusRequest {
    public typealias Response = TokenGrant
    public static let operation = "login"
    public var appId: String
    public var userId: UserID
    public var token: String
    /// Creates the check.
    public init(appId: String, userId: UserID, token: String) {
        self.appId = appId
        self.userId = userId
        self.token = token
    }
}

/// What a valid token grants.
public struct TokenGrant: Sendable, Hashable {
    /// When the login privilege expires, in Unix seconds; nil when it never does.
    public var loginExpiresAt: UInt64?
    /// Creates a grant.
    public init(loginExpiresAt: UInt64?) { self.loginExpiresAt = loginExpiresAt }
}
