import Synchronization
import SwitchboardCore

/// The session store of one node: a `SessionTable` in this process's memory.
public final class InMemorySessionStore: SessionStore {
    private let table: Mutex<SessionTable>

    /// An empty store applying `limits`, serving `allowedAppIds` (nil: any app id).
    public init(limits: Limits, allowedAppIds: Set<AppID>? = nil) {
        table = Mutex(SessionTable(limits: limits, allowedAppIds: allowedAppIds))
    }

    /// An empty store applying the limits in force in `limits` to each login (its app's) and
    /// serving the apps the book serves, and of them only `allowedAppIds` when given.
    public init(limits: LimitsBook, allowedAppIds: Set<AppID>? = nil) {
        table = Mutex(SessionTable(limits: limits, allowedAppIds: allowedAppIds))
    }

    public func checkLogin(_ request: Login) throws(RtmError) {
        try table.withLock { table throws(RtmError) in try table.checkLogin(request) }
    }

    public func login(_ request: Login, secret: String, tokenExpiresAt: UInt64?, now: WallClockTime) throws(RtmError) -> SessionLoginOutcome {
        try table.withLock { table throws(RtmError) in
            try table.login(request, secret: secret, tokenExpiresAt: tokenExpiresAt, now: now)
        }
    }

    public func remove(_ session: SessionID) -> SessionRecord? { table.withLock { $0.remove(session) } }

    public func heartbeat(_ session: SessionID, now: WallClockTime) -> SignOfLife {
        table.withLock { $0.heartbeat(session, now: now) }
    }

    public func renew(_ session: SessionID, tokenExpiresAt: UInt64?) -> Bool {
        table.withLock { $0.renew(session, tokenExpiresAt: tokenExpiresAt) }
    }

    public func contains(_ session: SessionID) -> Bool { table.withLock { $0.sessions[session] != nil } }

    public func disconnected(_ session: SessionID, now: WallClockTime) -> SessionRecord? {
        table.withLock { $0.disconnected(session, now: now) }
    }

    public func sweep(now: WallClockTime) -> [SessionExpiry] {
        table.withLock { $0.sweep(now: now) }
    }

    public func count() -> Int { table.withLock { $0.sessions.count } }

    public func removeAll(of user: UserKey) -> [SessionRecord] {
        table.withLock { table in table.sessions(of: user).compactMap { table.remove($0) } }
    }

    public func counts(in app: AppID?) -> SessionCounts { table.withLock { $0.counts(in: app) } }

    public func sessionsByApp() -> [AppID: Int] { table.withLock { $0.sessionsByApp } }

    public func numberSessions(after base: UInt64) { table.withLock { $0.numberSessions(after: base) } }

    public func adopt(_ record: SessionRecord) -> [SessionRecord] { table.withLock { $0.adopt(record) } }

    public func sessions(of user: UserKey) -> [SessionRecord] {
        table.withLock { table in table.sessions(of: user).compactMap { table.sessions[$0] } }
    }
}
