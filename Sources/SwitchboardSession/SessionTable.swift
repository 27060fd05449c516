import SwitchboardCore

/// The pure state machine of all sessions: logins, heartbeats, lost connections, resumes and
/// expiries, keyed by app so that two apps never meet.
///
/// It performs no effects; every mutation returns what happened so the `Session` actor can publish
/// events and drive the outbox. It never sees connections: the server tells it when a session's
/// connection is lost.
struct SessionTable: Sendable {
    /// What a login did.
    enum LoginOutcome: Equatable {
        /// A new session; `replaced` are the sessions of the same user (same app) it ended.
        case opened(SessionRecord, replaced: [SessionRecord])
        /// An existing session was taken back; `wasSuspended` when it had lost its connection
        /// (otherwise its old connection is stale, and the server closes it).
        case resumed(SessionRecord, wasSuspended: Bool)
    }

    /// What the passage of time did to one session.
    enum Expiry: Equatable {
        /// No sign of life within interval + grace: the session is now suspended.
        case heartbeatLost(SessionRecord)
        /// Suspended for longer than its presence timeout: the session is gone.
        case timedOut(SessionRecord)
        /// The login privilege expires within the warning window.
        case tokenWillExpire(SessionRecord, secondsLeft: Int)
        /// The login privilege expired: the session is gone.
        case tokenExpired(SessionRecord)
    }

    let limits: Limits
    /// The app ids this server serves; nil serves any.
    let allowedAppIds: Set<AppID>?
    /// Seconds before token expiry at which the client is warned.
    let tokenWarningSeconds: UInt64 = 30

    private(set) var sessions: [SessionID: SessionRecord] = [:]
    /// The sessions of each user (a compact set: a login ends the user's other sessions).
    private var byUser: [UserKey: CompactSet<SessionID>] = [:]
    /// Sessions per app, for the per-app concurrent-user limit.
    private var usersPerApp: [AppID: Int] = [:]
    private var lastID: UInt64 = 0

    init(limits: Limits, allowedAppIds: Set<AppID>? = nil) {
        self.limits = limits
        self.allowedAppIds = allowedAppIds
    }

    /// The sessions of `user`, oldest first.
    func sessions(of user: UserKey) -> [SessionID] { (byUser[user] ?? []).sorted() }

    /// Refuses an app id the server does not serve and a malformed user id.
    func checkLogin(_ request: Login) throws(RtmError) {
        guard !request.appId.isEmpty, allowedAppIds?.contains(request.appId) ?? true else {
            throw RtmError(.invalidAppId, operation: Login.operation, reason: "this server does not serve app id '\(request.appId)'")
        }
        try Validation.checkUserId(request.userId, limits: limits, operation: Login.operation)
    }

    /// Validates a login and applies it. `secret` is the fresh resume secret for a new session.
    mutating func login(
        _ request: Login, secret: String, tokenExpiresAt: UInt64?, now: Duration
    ) throws(RtmError) -> LoginOutcome {
        try checkLogin(request)
        let user = UserKey(request.appId, request.userId)
        if let ticket = request.resume, var record = sessions[ticket.session],
            Validation.constantTimeEquals(record.secret, ticket.secret), record.caller.user == user
        {
            let wasSuspended = !record.isLive
            record.suspendedAt = nil
            record.lastSeen = now
            if tokenExpiresAt != record.tokenExpiresAt {
                record.tokenExpiresAt = tokenExpiresAt
                record.expiryWarned = false
            }
            sessions[record.id] = record
            return .resumed(record, wasSuspended: wasSuspended)
        }
        let others = sessions(of: user)
        guard (usersPerApp[user.app] ?? 0) - others.count < limits.concurrentUsers else {
            throw RtmError(
                .loginNoServerResources, operation: Login.operation,
                reason: "app \(user.app) already has \(limits.concurrentUsers) users online")
        }
        let replaced = others.compactMap { remove($0) }
        lastID += 1
        let record = SessionRecord(
            caller: Caller(app: user.app, userId: user.userId, session: SessionID(lastID)), secret: secret,
            heartbeatInterval: limits.clampedHeartbeatInterval(request.heartbeatInterval),
            presenceTimeout: limits.clampedPresenceTimeout(request.presenceTimeout),
            lastSeen: now, suspendedAt: nil, tokenExpiresAt: tokenExpiresAt)
        sessions[record.id] = record
        byUser[user, default: []].insert(record.id)
        usersPerApp[user.app, default: 0] += 1
        return .opened(record, replaced: replaced)
    }

    /// Notes a sign of life. Returns false when the session is unknown.
    /// What a sign of life found.
    enum SignOfLife: Equatable {
        /// No such session.
        case unknown
        /// A live session.
        case alive
        /// A session marked suspended: its connection is evidently back (a lost-connection
        /// notice arrived after the session had moved to a new connection), so it is live again.
        case revived(SessionRecord)
    }

    /// Notes a sign of life.
    mutating func heartbeat(_ id: SessionID, now: Duration) -> SignOfLife {
        guard var record = sessions[id] else { return .unknown }
        record.lastSeen = now
        let wasSuspended = !record.isLive
        record.suspendedAt = nil
        sessions[id] = record
        return wasSuspended ? .revived(record) : .alive
    }

    /// Replaces the token expiry of a session. Returns false when the session is unknown.
    mutating func renew(_ id: SessionID, tokenExpiresAt: UInt64?) -> Bool {
        guard sessions[id] != nil else { return false }
        sessions[id]?.tokenExpiresAt = tokenExpiresAt
        sessions[id]?.expiryWarned = false
        return true
    }

    /// The session's connection closed: a live session is suspended and returned.
    mutating func disconnected(_ id: SessionID, now: Duration) -> SessionRecord? {
        guard var record = sessions[id], record.isLive else { return nil }
        record.suspendedAt = now
        sessions[id] = record
        return record
    }

    /// Ends a session at once. Returns it, or nil when unknown.
    mutating func remove(_ id: SessionID) -> SessionRecord? {
        guard let record = sessions.removeValue(forKey: id) else { return nil }
        let user = record.caller.user
        byUser.remove(id, fromSetAt: user)
        usersPerApp[user.app]? -= 1
        if usersPerApp[user.app] == 0 { usersPerApp[user.app] = nil }
        return record
    }

    /// Applies the passage of time up to `now` (`unixSeconds` for token expiry).
    mutating func sweep(now: Duration, unixSeconds: UInt64) -> [Expiry] {
        var expiries: [Expiry] = []
        for id in Array(sessions.keys) {
            guard var record = sessions[id] else { continue }
            if let expiresAt = record.tokenExpiresAt {
                if unixSeconds >= expiresAt {
                    _ = remove(id)
                    expiries.append(.tokenExpired(record))
                    continue
                }
                if !record.expiryWarned, expiresAt - unixSeconds <= tokenWarningSeconds, record.isLive {
                    record.expiryWarned = true
                    sessions[id] = record
                    expiries.append(.tokenWillExpire(record, secondsLeft: Int(expiresAt - unixSeconds)))
                }
            }
            if record.isLive {
                if now - record.lastSeen > .seconds(record.heartbeatInterval + limits.heartbeatGrace) {
                    record.suspendedAt = now
                    sessions[id] = record
                    expiries.append(.heartbeatLost(record))
                }
            } else if let suspendedAt = record.suspendedAt, now - suspendedAt >= .seconds(record.presenceTimeout) {
                _ = remove(id)
                expiries.append(.timedOut(record))
            }
        }
        return expiries
    }
}
