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

/// Log in (or resume a session). The server binds the granted session to the connection the
/// login came on; the session module never sees connections.
public struct Login: BusRequest, Hashable {
    public typealias Response = LoginGranted
    public static let operation = OperationName.Session.login.rawValue
    /// The app id from the client's config.
    public var appId: AppID
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
        appId: AppID, userId: UserID, token: String, heartbeatInterval: Int = 0, presenceTimeout: Int = 0,
        resume: ResumeTicket? = nil
    ) {
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
    /// Who is logged in now: app, user and the session, new or resumed.
    public var caller: Caller
    /// The ticket to resume this session later.
    public var ticket: ResumeTicket
    /// True when an existing session was resumed.
    public var resumed: Bool
    /// The heartbeat interval in force, in seconds.
    public var heartbeatInterval: Int
    /// The presence timeout in force, in seconds.
    public var presenceTimeout: Int
    /// For a session taken over from another node (cluster mode), what its resume lost: that
    /// node's kept pushes (`ResumeLoss.historyLost`); nil otherwise.
    public var takeOverLoss: ResumeLoss?

    /// Creates a grant.
    public init(
        caller: Caller, ticket: ResumeTicket, resumed: Bool, heartbeatInterval: Int, presenceTimeout: Int,
        takeOverLoss: ResumeLoss? = nil
    ) {
        self.caller = caller
        self.ticket = ticket
        self.resumed = resumed
        self.heartbeatInterval = heartbeatInterval
        self.presenceTimeout = presenceTimeout
        self.takeOverLoss = takeOverLoss
    }

    /// The session, new or resumed.
    public var session: SessionID { caller.session }
}

/// End the caller's session now, with no grace.
public struct Logout: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Session.logout.rawValue
    /// The session to end.
    public var caller: Caller
    /// Creates a logout request.
    public init(caller: Caller) { self.caller = caller }
}

/// The caller is alive (a heartbeat ping, or any other request).
public struct Heartbeat: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Session.heartbeat.rawValue
    /// The session that sent it.
    public var caller: Caller
    /// Creates a heartbeat.
    public init(caller: Caller) { self.caller = caller }
}

/// Replace the caller's token.
public struct RenewToken: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Session.renewToken.rawValue
    /// The session.
    public var caller: Caller
    /// The new token.
    public var token: String
    /// Creates a renewal.
    public init(caller: Caller, token: String) {
        self.caller = caller
        self.token = token
    }
}

/// End every session of a user of the caller's app at once, with no grace: each client is told
/// `kickedOutByServer` (the reference's reason for a session the server ended) and does not
/// reconnect. Answers how many sessions ended (0 when the user had none).
public struct DisconnectUser: BusRequest {
    public typealias Response = Int
    public static let operation = OperationName.Server.disconnect.rawValue
    /// Who asks (the server's API).
    public var caller: Caller
    /// The user whose sessions end.
    public var userId: UserID
    /// Why, in words, for the log and the client's closing frame.
    public var detail: String
    /// Creates the request.
    public init(caller: Caller, userId: UserID, detail: String = "disconnected by the server") {
        self.caller = caller
        self.userId = userId
        self.detail = detail
    }
}

/// The sessions a user of the caller's app has now, oldest first (none when it has none): for
/// the server's API and admin page. Changes nothing.
public struct ListUserSessions: BusRequest {
    public typealias Response = [UserSessionSummary]
    public static let operation = OperationName.Server.sessions.rawValue
    /// Who asks (the server's API).
    public var caller: Caller
    /// The user whose sessions are listed.
    public var userId: UserID
    /// Creates the request.
    public init(caller: Caller, userId: UserID) {
        self.caller = caller
        self.userId = userId
    }
}

/// One session of a user, as `ListUserSessions` tells it.
public struct UserSessionSummary: Sendable, Hashable {
    /// The session's id.
    public var session: SessionID
    /// When its last sign of life came.
    public var lastSeen: WallClockTime
    /// When it lost its connection; nil while it has one.
    public var suspendedAt: WallClockTime?
    /// Seconds between its heartbeats.
    public var heartbeatInterval: Int
    /// Seconds it waits for a resume once its connection is lost.
    public var presenceTimeout: Int
    /// Unix seconds when its login privilege expires; nil when it never does.
    public var tokenExpiresAt: UInt64?
    /// Creates a summary.
    public init(
        session: SessionID, lastSeen: WallClockTime, suspendedAt: WallClockTime?, heartbeatInterval: Int, presenceTimeout: Int,
        tokenExpiresAt: UInt64?
    ) {
        self.session = session
        self.lastSeen = lastSeen
        self.suspendedAt = suspendedAt
        self.heartbeatInterval = heartbeatInterval
        self.presenceTimeout = presenceTimeout
        self.tokenExpiresAt = tokenExpiresAt
    }
}

/// How many sessions and users an app has, or every app together: for the server's `info`.
public typealias SessionStatistics = Statistics<SessionCounts>

/// Sessions and users, counted.
public struct SessionCounts: Sendable, Hashable {
    /// Sessions, connected or waiting for a resume.
    public var sessions: Int
    /// Of those, the sessions waiting for a resume.
    public var suspended: Int
    /// Users with at least one session.
    public var users: Int
    /// Creates counts.
    public init(sessions: Int = 0, suspended: Int = 0, users: Int = 0) {
        self.sessions = sessions
        self.suspended = suspended
        self.users = users
    }
}

/// The connection carrying a session closed (socket closed, protocol error, slow consumer …).
/// Published by the server, which alone knows connections, only for the session's current one.
public struct SessionDisconnected: BusEvent, Hashable {
    /// The session that lost its connection.
    public var session: SessionID
    /// Creates the event.
    public init(session: SessionID) { self.session = session }
}

/// A session started.
public struct SessionOpened: BusEvent, Hashable {
    public var caller: Caller
    /// Creates the event.
    public init(caller: Caller) { self.caller = caller }
}

/// A session lost its connection and waits, for its presence timeout, to be resumed.
public struct SessionSuspended: BusEvent, Hashable {
    public var caller: Caller
    /// Creates the event.
    public init(caller: Caller) { self.caller = caller }
}

/// A suspended session was resumed on a new connection.
public struct SessionResumed: BusEvent, Hashable {
    public var caller: Caller
    /// Creates the event.
    public init(caller: Caller) { self.caller = caller }
}

/// A suspended session was not resumed within its presence timeout (`SessionClosed` follows).
public struct SessionTimedOut: BusEvent, Hashable {
    public var caller: Caller
    /// Creates the event.
    public init(caller: Caller) { self.caller = caller }
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
    /// The server's operator ended it (`DisconnectUser`).
    case kickedByServer
    /// Another node took it over (cluster mode, `EndMovedSession`): the session goes on there, so
    /// what the cluster shares of it stays; only this node's copy ends.
    case movedToAnotherNode
}

/// A session ended; everything it held is to be released.
public struct SessionClosed: BusEvent, Hashable {
    public var caller: Caller
    public var reason: SessionEndReason
    /// Creates the event.
    public init(caller: Caller, reason: SessionEndReason) {
        self.caller = caller
        self.reason = reason
    }
    /// The session that ended.
    public var session: SessionID { caller.session }
}

/// Pushes of the session family.
public enum SessionPush: Sendable, Hashable {
    /// A token expires soon (seconds left): the login token's (no channel), or the join token of
    /// the stream channel named.
    case tokenPrivilegeWillExpire(secondsLeft: Int, channel: String? = nil)
    /// Messages other nodes of a cluster published to `channel` (a message channel the session
    /// subscribes to, or, with `.user`, the session's own user channel, named by the user id) may
    /// not have reached it: this node's link to them was down a while (a pub/sub gap).
    case messagesMayBeLost(channelType: RtmChannelType, channel: String)
}

/// Put these app certificates in force for every token checked from now on (a reload): an app
/// left out has its tokens refused. Handled by the crypto module when it checks tokens (it
/// started with a certificate); with no handler, certificates take a restart.
public struct ReplaceAppCertificates: BusRequest {
    public typealias Response = Done
    public static var operation: String { "crypto.replaceCertificates" }
    /// The certificate of each app, by app id.
    public var certificates: [AppID: String]
    /// Creates the replacement.
    public init(certificates: [AppID: String]) {
        self.certificates = certificates
    }
}

/// Check a login token. Handled by the crypto module when app certificates are configured; with
/// no handler on the bus every token is accepted (development mode).
public struct VerifyLoginToken: BusRequest {
    public typealias Response = TokenGrant
    public static let operation = OperationName.Session.login.rawValue
    public var appId: AppID
    public var userId: UserID
    public var token: String
    /// Creates the check.
    public init(appId: AppID, userId: UserID, token: String) {
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

/// Issue a token for a user of an app, as an application server does (the server's API):
/// answered by the crypto module when the server has the app's certificate.
public struct MintToken: BusRequest {
    public typealias Response = MintedToken
    public static let operation = OperationName.Crypto.mintToken.rawValue
    /// The app, whose certificate signs the token.
    public var appId: AppID
    /// The user the token is for.
    public var userId: UserID
    /// `006` (AccessToken) or `007` (AccessToken2).
    public var format: TokenFormat
    /// nil for a login token; a stream channel's name for a token that joins it.
    public var streamChannel: String?
    /// Seconds the token (and its privilege) lasts; 0 never expires.
    public var expireSeconds: UInt32
    /// Creates the request.
    public init(appId: AppID, userId: UserID, format: TokenFormat = .v007, streamChannel: String? = nil, expireSeconds: UInt32 = 3600) {
        self.appId = appId
        self.userId = userId
        self.format = format
        self.streamChannel = streamChannel
        self.expireSeconds = expireSeconds
    }
}

/// The token formats Agora application servers issue.
public enum TokenFormat: String, Sendable, Hashable, CaseIterable {
    /// AccessToken (`006…`).
    case v006 = "006"
    /// AccessToken2 (`007…`).
    case v007 = "007"
}

/// A token issued.
public struct MintedToken: Sendable, Hashable {
    /// The token.
    public var token: String
    /// When it expires, Unix seconds; nil when it never does.
    public var expiresAt: UInt64?
    /// Creates the answer.
    public init(token: String, expiresAt: UInt64?) {
        self.token = token
        self.expiresAt = expiresAt
    }
}
