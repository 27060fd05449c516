import SwitchboardCore

/// The pure state machine of all sessions: logins, heartbeats, drops, resumes and expiries.
///
/// It performs no effects; every mutation returns what happened so the `Session` actor can publish
/// events and drive the outbox.
struct SessionTable: Sendable {
    /// What a login did.
    enum LoginOutcome: Equatable {
        /// A new session; `replaced` are the sessions of the same user it ended.
        case opened(SessionRecord, replaced: [SessionRecord])
        /// An existing session moved to this connection; `staleConnection` was still attached to it.
        case resumed(SessionRecord, staleConnection: ConnectionID?)
    }

    /// What the passage of time did to one session.
    enum Expiry: Equatable {
        /// No heartbeat within interval + grace: the session is now suspended.
        case heartbeatLost(SessionRecord, connection: ConnectionID)
        /// Suspended for longer than its presence timeout: the session is gone.
        case timedOut(SessionRecord)
        /// The login privilege expires within the warning window.
        case tokenWillExpire(SessionRecord, secondsLeft: Int)
        /// The login privilege expired: the session is gone.
        case tokenExpired(SessionRecord)
    }

    let limits: Limits
    /// The app ids this server serves; nil serves any.
    let allowedAppIds: Set<String>?
    /// Seconds before token expiry at which the client is warned.
    let tokenWarningSeconds: UInt64 = 30

    private(set) var sessions: [SessionID: SessionRecord] = [:]
    private var byUser: [UserID: [SessionID]] = [:]
    private var byConnection: [ConnectionID: SessionID] = [:]
    private var lastID: UInt64 = 0

    init(limits: Limits, allowedAppIds: Set<String>? = nil) {
        self.limits = limits
        self.allowedAppIds = allowedAppIds
    }

    func session(on connection: ConnectionID) -> SessionID? { byConnection[connection] }

    /// Refuses a second login on a connection that already has a session.
    func checkNotLoggedIn(_ connection: ConnectionID) throws(RtmError) {
        guard byConnection[connection] == nil else {
            throw RtmError(.duplicateOperation, operation: Login.operation, reason: "this connection is already logged in")
        }
    }

    func sessions(of userId: UserID) -> [SessionID] { byUser[userId] ?? [] }

    /// Validates a login and applies it. `secret` is the fresh resume secret for a new session.
    mutating func login(
        _ request: Login, secret: String, tokenExpiresAt: UInt64?, now: Duration
    ) throws(RtmError) -> LoginOutcome {
        guard !request.appId.isEmpty, allowedAppIds?.contains(request.appId) ?? true else {
            throw RtmError(.invalidAppId, operation: Login.operation, reason: "this server does not serve app id '\(request.appId)'")
        }
        try Validation.checkUserId(request.userId, limits: limits, operation: Login.operation)
        try checkNotLoggedIn(request.connection)
        if let ticket = request.resume, var record = sessions[ticket.session],
            Validation.constantTimeEquals(record.secret, ticket.secret),
            record.userId == request.userId, record.appId == request.appId
        {
            let stale = record.connection
            if let stale { byConnection[stale] = nil }
            record.connection = request.connection
            record.suspendedAt = nil
            record.lastSeen = now
            if tokenExpiresAt != record.tokenExpiresAt {
                record.tokenExpiresAt = tokenExpiresAt
                record.expiryWarned = false
            }
            sessions[record.id] = record
            byConnection[request.connection] = record.id
            return .resumed(record, staleConnection: stale)
        }
        let others = byUser[request.userId] ?? []
        guard sessions.count - others.count < limits.concurrentUsers else {
            throw RtmError(
                .loginNoServerResources, operation: Login.operation,
                reason: "the server already has \(limits.concurrentUsers) users online")
        }
        let replaced = others.compactMap { remove($0) }
        lastID += 1
        let record = SessionRecord(
            id: SessionID(lastID), userId: request.userId, appId: request.appId, secret: secret,
            connection: request.connection,
            heartbeatInterval: limits.clampedHeartbeatInterval(request.heartbeatInterval),
            presenceTimeout: limits.clampedPresenceTimeout(request.presenceTimeout),
            lastSeen: now, suspendedAt: nil, tokenExpiresAt: tokenExpiresAt)
        sessions[record.id] = record
        byUser[record.userId, default: []].append(record.id)
        byConnection[request.connection] = record.id
        return .opened(record, replaced: replaced)
    }

    /// Notes a sign of life. Returns false when the session is unknown.
    mutating func heartbeat(_ id: SessionID, now: Duration) -> Bool {
        guard sessions[id] != nil else { return false }
        sessions[id]?.lastSeen = now
        return true
    }

    /// Replaces the token expiry of a session. Returns false when the session is unknown.
    mutating func renew(_ id: SessionID, tokenExpiresAt: UInt64?) -> Bool {
        guard sessions[id] != nil else { return false }
        sessions[id]?.tokenExpiresAt = tokenExpiresAt
        sessions[id]?.expiryWarned = false
        return true
    }

    /// The connection closed: its session (if any) is suspended and returned.
    mutating func connectionDropped(_ connection: ConnectionID, now: Duration) -> SessionRecord? {
        guard let id = byConnection.removeValue(forKey: connection), var record = sessions[id] else { return nil }
        record.connection = nil
        record.suspendedAt = now
        sessions[id] = record
        return record
    }

    /// Ends a session at once. Returns it, or nil when unknown.
    mutating func remove(_ id: SessionID) -> SessionRecord? {
        guard let record = sessions.removeValue(forKey: id) else { return nil }
        byUser[record.userId]?.removeAll { $0 == id }
        if byUser[record.userId]?.isEmpty == true { byUser[record.userId] = nil }
        if let connection = record.connection { byConnection[connection] = nil }
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
                if !record.expiryWarned, expiresAt - unixSeconds <= tokenWarningSeconds, record.connection != nil {
                    record.expiryWarned = true
                    sessions[id] = record
                    expiries.append(.tokenWillExpire(record, secondsLeft: Int(expiresAt - unixSeconds)))
                }
            }
            if let connection = record.connection {
                let silence = now - record.lastSeen
                if silence > .seconds(record.heartbeatInterval + limits.heartbeatGrace) {
                    byConnection[connection] = nil
                    record.connection = nil
                    record.suspendedAt = now
                    sessions[id] = record
                    expiries.append(.heartbeatLost(record, connection: connection))
                }
            } else if let suspendedAt = record.suspendedAt, now - suspendedAt >= .seconds(record.presenceTimeout) {
                _ = remove(id)
                expiries.append(.timedOut(record))
            }
        }
        return expiries
    }
}
