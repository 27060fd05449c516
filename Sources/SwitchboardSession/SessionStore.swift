import SwitchboardCore

/// Where the session module keeps sessions: their records, resume tickets, the same-user rule and
/// the concurrent users of each app.
///
/// The store recipe (Modules.md): each method is one atomic check-and-change that returns what it
/// did, so the module publishes events and drives the outbox from the answer alone, in the
/// store's order (it calls the store one operation at a time). Errors carry the reference's
/// codes. Times are the module clock's wall time (`wallNow`), so a record another node reads
/// (to resume the session there, say) has deadlines that mean the same to it.
/// `InMemorySessionStore` is the built-in one.
public protocol SessionStore: Sendable {
    /// Refuses an app id the store does not serve and a malformed user id, changing nothing.
    func checkLogin(_ request: Login) async throws(RtmError)
    /// Validates a login and applies it: a resume of the session its ticket names, or a new
    /// session ending the user's others. `secret` is the resume secret of a new session.
    func login(_ request: Login, secret: String, tokenExpiresAt: UInt64?, now: WallClockTime) async throws(RtmError) -> SessionLoginOutcome
    /// Ends a session at once; nil when unknown.
    func remove(_ session: SessionID) async throws(RtmError) -> SessionRecord?
    /// Notes a sign of life.
    func heartbeat(_ session: SessionID, now: WallClockTime) async throws(RtmError) -> SignOfLife
    /// Replaces a session's token expiry; false when the session is unknown.
    func renew(_ session: SessionID, tokenExpiresAt: UInt64?) async throws(RtmError) -> Bool
    /// Whether the session exists (live or suspended).
    func contains(_ session: SessionID) async throws(RtmError) -> Bool
    /// The session's connection closed: a live session is suspended and returned.
    func disconnected(_ session: SessionID, now: WallClockTime) async throws(RtmError) -> SessionRecord?
    /// Applies the passage of time up to `now`: lost heartbeats, presence timeouts, token expiry.
    func sweep(now: WallClockTime) async throws(RtmError) -> [SessionExpiry]
    /// How many sessions exist (live or suspended).
    func count() async throws(RtmError) -> Int
    /// Ends every session of `user` at once; returns them, oldest first (none when it had none).
    func removeAll(of user: UserKey) async throws(RtmError) -> [SessionRecord]
    /// Sessions and users of `app`, or (nil) of every app.
    func counts(in app: AppID?) async throws(RtmError) -> SessionCounts
    /// The sessions of `user`, oldest first; changes nothing.
    func sessions(of user: UserKey) async throws(RtmError) -> [SessionRecord]
    /// How many sessions each app has (live or suspended), apps with none left out.
    func sessionsByApp() async throws(RtmError) -> [AppID: Int]
    /// Numbers the sessions opened from now on after `base` (cluster mode: each node numbers
    /// from its own block, so a number names one session on every node).
    func numberSessions(after base: UInt64) async throws(RtmError)
    /// Takes in `record`, a session another node held, under its number (cluster mode); the
    /// user's other sessions here end and are returned, oldest first.
    func adopt(_ record: SessionRecord) async throws(RtmError) -> [SessionRecord]
}

/// Everything the server keeps about one session.
public struct SessionRecord: Sendable, Hashable {
    /// App, user and session id.
    public let caller: Caller
    /// The resume secret.
    public var secret: String { storedSecret.text }
    private let storedSecret: StoredSecret
    /// Seconds between heartbeats.
    public let heartbeatInterval: Int
    /// Seconds a session without a connection waits for a resume.
    public let presenceTimeout: Int
    /// When the last sign of life came.
    public var lastSeen: WallClockTime
    /// When the connection was lost; nil while the session has one.
    public var suspendedAt: WallClockTime?
    /// Unix seconds when the login privilege expires; nil when it never does.
    public var tokenExpiresAt: UInt64?
    /// Whether the expiry warning was sent for the current token.
    public var expiryWarned = false

    /// Creates a record.
    public init(
        caller: Caller, secret: String, heartbeatInterval: Int, presenceTimeout: Int, lastSeen: WallClockTime,
        suspendedAt: WallClockTime?, tokenExpiresAt: UInt64?, expiryWarned: Bool = false
    ) {
        self.caller = caller
        self.storedSecret = StoredSecret(secret)
        self.heartbeatInterval = heartbeatInterval
        self.presenceTimeout = presenceTimeout
        self.lastSeen = lastSeen
        self.suspendedAt = suspendedAt
        self.tokenExpiresAt = tokenExpiresAt
        self.expiryWarned = expiryWarned
    }

    /// The session's id.
    public var id: SessionID { caller.session }
    /// Whether the session has a connection.
    public var isLive: Bool { suspendedAt == nil }
    /// The ticket that resumes it.
    public var ticket: ResumeTicket { ResumeTicket(session: id, secret: secret) }
}

/// What a login did.
public enum SessionLoginOutcome: Sendable, Equatable {
    /// A new session; `replaced` are the sessions of the same user (same app) it ended.
    case opened(SessionRecord, replaced: [SessionRecord])
    /// An existing session was taken back; `wasSuspended` when it had lost its connection
    /// (otherwise its old connection is stale, and the server closes it).
    case resumed(SessionRecord, wasSuspended: Bool)
}

/// What a sign of life found.
public enum SignOfLife: Sendable, Equatable {
    /// No such session.
    case unknown
    /// A live session.
    case alive
    /// A session marked suspended: its connection is evidently back (a lost-connection notice
    /// arrived after the session had moved to a new connection), so it is live again.
    case revived(SessionRecord)
}

/// What the passage of time did to one session.
public enum SessionExpiry: Sendable, Equatable {
    /// No sign of life within interval + grace: the session is now suspended.
    case heartbeatLost(SessionRecord)
    /// Suspended for longer than its presence timeout: the session is gone.
    case timedOut(SessionRecord)
    /// The login privilege expires within the warning window.
    case tokenWillExpire(SessionRecord, secondsLeft: Int)
    /// The login privilege expired: the session is gone.
    case tokenExpired(SessionRecord)
}

/// A resume secret as a record keeps it: 32 lowercase hex digits (what `Session.randomSecret`
/// makes) as the 16 bytes they spell, any other text as it is. Every session has a record, and a
/// 32-character string costs 96 bytes of heap beside it; the bytes cost nothing beside the record.
/// The text comes back exactly as given, so two secrets are equal when their texts are.
struct StoredSecret: Sendable, Hashable {
    private enum Form: Sendable, Hashable {
        case hex(UInt64, UInt64)
        case text(String)
    }
    private let form: Form

    init(_ text: String) {
        let utf8 = text.utf8
        if utf8.count == 32, let high = Self.value(utf8.prefix(16)), let low = Self.value(utf8.suffix(16)) {
            form = .hex(high, low)
        } else {
            form = .text(text)
        }
    }

    /// The secret's text.
    var text: String {
        switch form {
        case .text(let text): return text
        case .hex(let high, let low):
            // Each half's eight bytes, most significant first.
            return withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Hex.lowercase($0) }
        }
    }

    /// Sixteen lowercase hex digits as a number; nil for any other character (an upper-case digit
    /// too: its text would not come back as it was given).
    private static func value(_ digits: Substring.UTF8View) -> UInt64? {
        var value: UInt64 = 0
        for byte in digits {
            guard let digit = Hex.value(of: byte), Hex.digits[Int(digit)] == byte else { return nil }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}
