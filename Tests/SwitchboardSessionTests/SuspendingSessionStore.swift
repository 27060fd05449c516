import SwitchboardCore
import SwitchboardSession
import SwitchboardTestKit

/// A session store that suspends on every call before handing it to an in-memory store: the
/// module must reach its sessions only through `SessionStore`, and keep its order when it suspends.
final class SuspendingSessionStore: SessionStore {
    let calls = SuspendingCalls()
    private let base: InMemorySessionStore

    init(limits: Limits = Limits()) { base = InMemorySessionStore(limits: limits) }

    func checkLogin(_ request: Login) async throws(RtmError) {
        await calls.pause("checkLogin")
        try base.checkLogin(request)
    }
    func login(_ request: Login, secret: String, tokenExpiresAt: UInt64?, now: WallClockTime) async throws(RtmError) -> SessionLoginOutcome {
        await calls.pause("login")
        return try base.login(request, secret: secret, tokenExpiresAt: tokenExpiresAt, now: now)
    }
    func remove(_ session: SessionID) async throws(RtmError) -> SessionRecord? {
        await calls.pause("remove")
        return base.remove(session)
    }
    func heartbeat(_ session: SessionID, now: WallClockTime) async throws(RtmError) -> SignOfLife {
        await calls.pause("heartbeat")
        return base.heartbeat(session, now: now)
    }
    func renew(_ session: SessionID, tokenExpiresAt: UInt64?) async throws(RtmError) -> Bool {
        await calls.pause("renew")
        return base.renew(session, tokenExpiresAt: tokenExpiresAt)
    }
    func contains(_ session: SessionID) async throws(RtmError) -> Bool {
        await calls.pause("contains")
        return base.contains(session)
    }
    func disconnected(_ session: SessionID, now: WallClockTime) async throws(RtmError) -> SessionRecord? {
        await calls.pause("disconnected")
        return base.disconnected(session, now: now)
    }
    func sweep(now: WallClockTime) async throws(RtmError) -> [SessionExpiry] {
        await calls.pause("sweep")
        return base.sweep(now: now)
    }
    func count() async throws(RtmError) -> Int {
        await calls.pause("count")
        return base.count()
    }
    func removeAll(of user: UserKey) async throws(RtmError) -> [SessionRecord] {
        await calls.pause("removeAll")
        return base.removeAll(of: user)
    }
    func counts(in app: AppID?) async throws(RtmError) -> SessionCounts {
        await calls.pause("counts")
        return base.counts(in: app)
    }
    func sessionsByApp() async throws(RtmError) -> [AppID: Int] {
        await calls.pause("sessionsByApp")
        return base.sessionsByApp()
    }
    func sessions(of user: UserKey) async throws(RtmError) -> [SessionRecord] {
        await calls.pause("sessions")
        return base.sessions(of: user)
    }
    func numberSessions(after base: UInt64) async throws(RtmError) {
        await calls.pause("numberSessions")
        self.base.numberSessions(after: base)
    }
    func adopt(_ record: SessionRecord) async throws(RtmError) -> [SessionRecord] {
        await calls.pause("adopt")
        return base.adopt(record)
    }
}
