import SwitchboardCore

/// The pure state machine of all sessions: logins, heartbeats, lost connections, resumes and
/// expiries, keyed by app so that two apps never meet.
///
/// It performs no effects; every mutation returns what happened so the `Session` actor can publish
/// events and drive the outbox. It never sees connections: the server tells it when a session's
/// connection is lost.
struct SessionTable: Sendable {
    typealias LoginOutcome = SessionLoginOutcome
    typealias Expiry = SessionExpiry

    /// The limits in force, per app, and the apps the server serves (a reload changes both).
    let limits: LimitsBook
    /// The app ids this module serves, whatever the book says; nil serves those the book does.
    let allowedAppIds: Set<AppID>?
    /// Seconds before token expiry at which the client is warned.
    let tokenWarningSeconds: UInt64 = 30

    private(set) var sessions: [SessionID: SessionRecord] = [:]
    /// The sessions of each user, and the users online per app (the concurrent-user limit).
    private var users = UserSessions()
    private var lastID: UInt64 = 0

    init(limits: LimitsBook, allowedAppIds: Set<AppID>? = nil) {
        self.limits = limits
        self.allowedAppIds = allowedAppIds
    }

    init(limits: Limits, allowedAppIds: Set<AppID>? = nil) {
        self.init(limits: LimitsBook(limits: limits), allowedAppIds: allowedAppIds)
    }

    /// The sessions of `user`, oldest first.
    func sessions(of user: UserKey) -> [SessionID] { users.sessions(of: user).sorted() }

    /// How many sessions each app has, apps with none left out (kept as sessions start and end).
    var sessionsByApp: [AppID: Int] { users.sessionsByApp }

    /// Sessions and users of `app`, or (nil) of every app.
    func counts(in app: AppID?) -> SessionCounts {
        var counts = SessionCounts()
        var users = Set<UserKey>()
        for record in sessions.values where app == nil || record.caller.app == app {
            counts.sessions += 1
            if !record.isLive { counts.suspended += 1 }
            users.insert(record.caller.user)
        }
        counts.users = users.count
        return counts
    }

    /// Refuses an app id the server does not serve (now: an app removed by a reload is refused
    /// from then on) and a malformed user id.
    func checkLogin(_ request: Login) throws(RtmError) {
        guard !request.appId.isEmpty, allowedAppIds?.contains(request.appId) ?? true, limits.serves(request.appId) else {
            throw RtmError(.invalidAppId, operation: Login.operation, reason: "this server does not serve app id '\(request.appId)'")
        }
        try Validation.checkUserId(request.userId, limits: limits.server, operation: Login.operation)
    }

    /// Validates a login and applies it. `secret` is the fresh resume secret for a new session.
    mutating func login(
        _ request: Login, secret: String, tokenExpiresAt: UInt64?, now: WallClockTime
    ) throws(RtmError) -> LoginOutcome {
        try checkLogin(request)
        // The app's limits, read once for the whole login.
        let limits = self.limits.limits(for: request.appId)
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
        // The user's own sessions end with this login: it does not count against the limit.
        guard users.onlineUserCount(in: user.app) - (others.isEmpty ? 0 : 1) < limits.sessions.concurrentUsers else {
            throw RtmError(
                .loginNoServerResources, operation: Login.operation,
                reason: "app \(user.app) already has \(limits.sessions.concurrentUsers) users online")
        }
        let replaced = others.compactMap { remove($0) }
        lastID += 1
        let record = SessionRecord(
            caller: Caller(app: user.app, userId: user.userId, session: SessionID(lastID)), secret: secret,
            heartbeatInterval: limits.sessions.clampedHeartbeatInterval(request.heartbeatInterval),
            presenceTimeout: limits.sessions.clampedPresenceTimeout(request.presenceTimeout),
            lastSeen: now, suspendedAt: nil, tokenExpiresAt: tokenExpiresAt)
        sessions[record.id] = record
        users.open(record.caller)
        return .opened(record, replaced: replaced)
    }

    /// Numbers the sessions opened from now on after `base` (when that is ahead of the last one),
    /// so that a session's number names it on every node of a cluster.
    mutating func numberSessions(after base: UInt64) {
        lastID = max(lastID, base)
    }

    /// Takes in `record`, a session another node held, under its number; the user's other
    /// sessions here end, as a new login's would, and are returned. No limit is checked: the
    /// session existed already.
    mutating func adopt(_ record: SessionRecord) -> [SessionRecord] {
        let replaced = sessions(of: record.caller.user).filter { $0 != record.id }.compactMap { remove($0) }
        _ = remove(record.id)
        sessions[record.id] = record
        users.open(record.caller)
        return replaced
    }

    /// Notes a sign of life.
    mutating func heartbeat(_ id: SessionID, now: WallClockTime) -> SignOfLife {
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
    mutating func disconnected(_ id: SessionID, now: WallClockTime) -> SessionRecord? {
        guard var record = sessions[id], record.isLive else { return nil }
        record.suspendedAt = now
        sessions[id] = record
        return record
    }

    /// Ends a session at once. Returns it, or nil when unknown.
    mutating func remove(_ id: SessionID) -> SessionRecord? {
        guard let record = sessions.removeValue(forKey: id) else { return nil }
        users.close(record.caller)
        return record
    }

    /// Applies the passage of time up to `now`.
    mutating func sweep(now: WallClockTime) -> [Expiry] {
        let unixSeconds = now.secondsSince1970
        let heartbeatGrace = limits.server.sessions.heartbeatGrace
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
                if now - record.lastSeen > .seconds(record.heartbeatInterval + heartbeatGrace) {
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
