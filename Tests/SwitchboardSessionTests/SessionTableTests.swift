import Testing
import SwitchboardCore
@testable import SwitchboardSession

@Suite(.timeLimit(.minutes(2))) struct SessionTableTests {
    let limits = Limits()
    /// The wall-clock time the tests begin at.
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    func login(_ user: String, app: String = "app", resume: ResumeTicket? = nil) -> Login {
        Login(appId: app, userId: user, token: "", resume: resume)
    }

    func opened(_ outcome: SessionTable.LoginOutcome) -> SessionRecord? {
        if case .opened(let record, _) = outcome { record } else { nil }
    }

    @Test func rejectsBadUserIds() {
        var table = SessionTable(limits: limits)
        for bad in ["", String(repeating: "u", count: 65), "tab\there", "new\nline"] {
            do {
                _ = try table.login(login(bad), secret: "s", tokenExpiresAt: nil, now: start)
                Issue.record("\(bad) must be refused")
            } catch {
                #expect(error.code == .invalidUserId)
                #expect(error.operation == "login")
            }
        }
        #expect(table.sessions.isEmpty)
    }

    @Test func onlyServedAppIdsMayLogIn() throws {
        var table = SessionTable(limits: limits, allowedAppIds: ["app"])
        do {
            _ = try table.login(login("alice", app: "elsewhere"), secret: "s", tokenExpiresAt: nil, now: start)
            Issue.record("an app id the server does not serve must be refused")
        } catch {
            #expect(error.code == .invalidAppId)
        }
        _ = try table.login(login("alice"), secret: "s", tokenExpiresAt: nil, now: start)
    }

    @Test func clampsIntervals() throws {
        var table = SessionTable(limits: limits)
        var request = login("alice")
        request.heartbeatInterval = 1
        request.presenceTimeout = 10_000
        let record = try #require(opened(try table.login(request, secret: "s", tokenExpiresAt: nil, now: start)))
        #expect(record.heartbeatInterval == 5)
        #expect(record.presenceTimeout == 300)
    }

    @Test func sameUserElsewhereReplacesTheOldSession() throws {
        var table = SessionTable(limits: limits)
        let first = try #require(opened(try table.login(login("alice"), secret: "s1", tokenExpiresAt: nil, now: start)))
        let outcome = try table.login(login("alice"), secret: "s2", tokenExpiresAt: nil, now: start)
        guard case .opened(let record, let replaced) = outcome else {
            Issue.record("expected a new session")
            return
        }
        #expect(replaced.map(\.id) == [first.id])
        #expect(table.sessions(of: UserKey("app", "alice")) == [record.id])
    }

    @Test func theSameUserIdInAnotherAppIsAnotherUser() throws {
        var table = SessionTable(limits: limits)
        let inA = try #require(opened(try table.login(login("alice", app: "a"), secret: "s", tokenExpiresAt: nil, now: start)))
        let outcome = try table.login(login("alice", app: "b"), secret: "s", tokenExpiresAt: nil, now: start)
        guard case .opened(let inB, let replaced) = outcome else {
            Issue.record("expected a new session")
            return
        }
        #expect(replaced.isEmpty)
        #expect(table.sessions(of: UserKey("a", "alice")) == [inA.id])
        #expect(table.sessions(of: UserKey("b", "alice")) == [inB.id])
        // A ticket of app a does not resume in app b.
        let crossed = try table.login(login("alice", app: "b", resume: inA.ticket), secret: "t", tokenExpiresAt: nil, now: start)
        #expect(opened(crossed) != nil)
        #expect(table.sessions(of: UserKey("a", "alice")) == [inA.id])
    }

    @Test func heartbeatLossSuspendsThenPresenceTimeoutEnds() throws {
        var table = SessionTable(limits: limits)
        var request = login("alice")
        request.heartbeatInterval = 5
        request.presenceTimeout = 30
        _ = try table.login(request, secret: "s", tokenExpiresAt: nil, now: start)
        #expect(table.sweep(now: start + .seconds(15)).isEmpty)
        let lost = table.sweep(now: start + .seconds(16))
        guard case .heartbeatLost(let record) = lost.first else {
            Issue.record("expected heartbeat loss, got \(lost)")
            return
        }
        #expect(record.suspendedAt == start + .seconds(16))
        #expect(table.sweep(now: start + .seconds(45)).isEmpty)
        let ended = table.sweep(now: start + .seconds(46))
        #expect(ended.count == 1)
        if case .timedOut = ended.first {} else { Issue.record("expected time-out, got \(ended)") }
        #expect(table.sessions.isEmpty)
    }

    @Test func heartbeatsKeepASessionAlive() throws {
        var table = SessionTable(limits: limits)
        let record = try #require(opened(try table.login(login("alice"), secret: "s", tokenExpiresAt: nil, now: start)))
        for second in stride(from: 5, through: 100, by: 5) {
            let found = table.heartbeat(record.id, now: start + .seconds(second))
            #expect(found == .alive)
            let expiries = table.sweep(now: start + .seconds(second + 1))
            #expect(expiries.isEmpty)
        }
    }

    @Test func resumeNeedsTheRightSecretAndUser() throws {
        var table = SessionTable(limits: limits)
        let record = try #require(opened(try table.login(login("alice"), secret: "secret", tokenExpiresAt: nil, now: start)))
        _ = table.disconnected(record.id, now: start + .seconds(1))
        let wrongSecret = try table.login(
            login("alice", resume: ResumeTicket(session: record.id, secret: "guess")), secret: "n",
            tokenExpiresAt: nil, now: start + .seconds(2))
        guard case .opened(let fresh, let replaced) = wrongSecret else {
            Issue.record("a wrong secret must not resume")
            return
        }
        #expect(replaced.map(\.id) == [record.id])
        _ = table.disconnected(fresh.id, now: start + .seconds(3))
        let bob = try table.login(login("bob", resume: fresh.ticket), secret: "b", tokenExpiresAt: nil, now: start + .seconds(4))
        #expect(opened(bob) != nil, "another user's ticket must not resume")
        let resumed = try table.login(login("alice", resume: fresh.ticket), secret: "x", tokenExpiresAt: nil, now: start + .seconds(4))
        #expect(resumed == .resumed(table.sessions[fresh.id]!, wasSuspended: true))
        #expect(table.sessions[fresh.id]?.isLive == true)
    }

    @Test func resumingALiveSessionSaysItWasNotSuspended() throws {
        var table = SessionTable(limits: limits)
        let record = try #require(opened(try table.login(login("alice"), secret: "s", tokenExpiresAt: nil, now: start)))
        let outcome = try table.login(login("alice", resume: record.ticket), secret: "x", tokenExpiresAt: nil, now: start)
        #expect(outcome == .resumed(record, wasSuspended: false))
        let first = table.disconnected(record.id, now: start + .seconds(1))
        let second = table.disconnected(record.id, now: start + .seconds(2))
        #expect(first != nil)
        #expect(second == nil, "a suspended session is not suspended twice")
    }

    @Test func concurrentUserLimitIsPerApp() throws {
        var limited = Limits()
        limited.sessions.concurrentUsers = 2
        var table = SessionTable(limits: limited)
        _ = try table.login(login("a"), secret: "s", tokenExpiresAt: nil, now: start)
        _ = try table.login(login("b"), secret: "s", tokenExpiresAt: nil, now: start)
        do {
            _ = try table.login(login("c"), secret: "s", tokenExpiresAt: nil, now: start)
            Issue.record("a third user must be refused")
        } catch {
            #expect(error.code == .loginNoServerResources)
        }
        // The same user logging in again replaces itself and does not count twice.
        _ = try table.login(login("b"), secret: "s", tokenExpiresAt: nil, now: start)
        // Another app has its own count.
        _ = try table.login(login("c", app: "other"), secret: "s", tokenExpiresAt: nil, now: start)
        #expect(table.sessions.count == 3)
    }

    @Test func tokenExpiryWarnsThenEnds() throws {
        var table = SessionTable(limits: limits)
        var request = login("alice")
        request.heartbeatInterval = 1800
        _ = try table.login(request, secret: "s", tokenExpiresAt: start.secondsSince1970 + 1_000, now: start)
        #expect(table.sweep(now: start + .seconds(969)).isEmpty)
        let warned = table.sweep(now: start + .seconds(970))
        if case .tokenWillExpire(_, let left) = warned.first { #expect(left == 30) } else { Issue.record("\(warned)") }
        #expect(table.sweep(now: start + .seconds(980)).isEmpty)
        let ended = table.sweep(now: start + .seconds(1_000))
        if case .tokenExpired = ended.first {} else { Issue.record("\(ended)") }
        #expect(table.sessions.isEmpty)
    }

    @Test func aSignOfLifeRevivesASessionMarkedLostAfterItMovedOn() throws {
        var table = SessionTable(limits: limits)
        let record = try #require(opened(try table.login(login("alice"), secret: "s", tokenExpiresAt: nil, now: start)))
        // A lost-connection notice that arrived after the resume on a new connection.
        _ = table.disconnected(record.id, now: start + .seconds(1))
        let found = table.heartbeat(record.id, now: start + .seconds(2))
        guard case .revived(let revived) = found else {
            Issue.record("expected the session revived, got \(found)")
            return
        }
        #expect(revived.isLive)
        let timedOut = table.sweep(now: start + .seconds(400)).contains { if case .timedOut = $0 { true } else { false } }
        #expect(!timedOut, "a revived session does not time out")
        let unknown = table.heartbeat(SessionID(999), now: start + .seconds(3))
        #expect(unknown == .unknown)
    }
}
