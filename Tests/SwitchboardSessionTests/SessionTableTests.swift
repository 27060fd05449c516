import Testing
import SwitchboardCore
@testable import SwitchboardSession

@Suite struct SessionTableTests {
    let limits = Limits()

    func login(_ user: String, on connection: UInt64, resume: ResumeTicket? = nil) -> Login {
        Login(connection: ConnectionID(connection), appId: "app", userId: user, token: "", resume: resume)
    }

    @Test func rejectsBadUserIds() {
        var table = SessionTable(limits: limits)
        for bad in ["", String(repeating: "u", count: 65), "tab\there", "new\nline"] {
            do {
                _ = try table.login(login(bad, on: 1), secret: "s", tokenExpiresAt: nil, now: .zero)
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
        var other = login("alice", on: 1)
        other.appId = "elsewhere"
        #expect(throws: RtmError.self) {
            var copy = table
            _ = try copy.login(other, secret: "s", tokenExpiresAt: nil, now: .zero)
        }
        do {
            _ = try table.login(other, secret: "s", tokenExpiresAt: nil, now: .zero)
        } catch {
            #expect(error.code == .invalidAppId)
        }
        _ = try table.login(login("alice", on: 1), secret: "s", tokenExpiresAt: nil, now: .zero)
    }

    @Test func clampsIntervals() throws {
        var table = SessionTable(limits: limits)
        var request = login("alice", on: 1)
        request.heartbeatInterval = 1
        request.presenceTimeout = 10_000
        guard case .opened(let record, _) = try table.login(request, secret: "s", tokenExpiresAt: nil, now: .zero) else {
            Issue.record("expected a new session")
            return
        }
        #expect(record.heartbeatInterval == 5)
        #expect(record.presenceTimeout == 300)
    }

    @Test func secondLoginOnSameConnectionIsDuplicate() throws {
        var table = SessionTable(limits: limits)
        _ = try table.login(login("alice", on: 1), secret: "s", tokenExpiresAt: nil, now: .zero)
        #expect(throws: RtmError(.duplicateOperation, operation: "login", reason: "this connection is already logged in")) {
            var copy = table
            _ = try copy.login(login("bob", on: 1), secret: "s", tokenExpiresAt: nil, now: .zero)
        }
    }

    @Test func sameUserElsewhereReplacesTheOldSession() throws {
        var table = SessionTable(limits: limits)
        _ = try table.login(login("alice", on: 1), secret: "s1", tokenExpiresAt: nil, now: .zero)
        let outcome = try table.login(login("alice", on: 2), secret: "s2", tokenExpiresAt: nil, now: .zero)
        guard case .opened(let record, let replaced) = outcome else {
            Issue.record("expected a new session")
            return
        }
        #expect(replaced.map(\.connection) == [ConnectionID(1)])
        #expect(table.sessions(of: "alice") == [record.id])
        #expect(table.session(on: ConnectionID(1)) == nil)
    }

    @Test func heartbeatLossSuspendsThenPresenceTimeoutEnds() throws {
        var table = SessionTable(limits: limits)
        var request = login("alice", on: 1)
        request.heartbeatInterval = 5
        request.presenceTimeout = 30
        _ = try table.login(request, secret: "s", tokenExpiresAt: nil, now: .zero)
        #expect(table.sweep(now: .seconds(15), unixSeconds: 0).isEmpty)
        let lost = table.sweep(now: .seconds(16), unixSeconds: 0)
        guard case .heartbeatLost(let record, let connection) = lost.first else {
            Issue.record("expected heartbeat loss, got \(lost)")
            return
        }
        #expect(connection == ConnectionID(1))
        #expect(record.suspendedAt == .seconds(16))
        #expect(table.sweep(now: .seconds(45), unixSeconds: 0).isEmpty)
        let ended = table.sweep(now: .seconds(46), unixSeconds: 0)
        #expect(ended.count == 1)
        if case .timedOut = ended.first {} else { Issue.record("expected time-out, got \(ended)") }
        #expect(table.sessions.isEmpty)
    }

    @Test func heartbeatsKeepASessionAlive() throws {
        var table = SessionTable(limits: limits)
        guard case .opened(let record, _) = try table.login(login("alice", on: 1), secret: "s", tokenExpiresAt: nil, now: .zero) else {
            return
        }
        for second in stride(from: 5, through: 100, by: 5) {
            let known = table.heartbeat(record.id, now: .seconds(second))
            #expect(known)
            let expiries = table.sweep(now: .seconds(second + 1), unixSeconds: 0)
            #expect(expiries.isEmpty)
        }
    }

    @Test func resumeNeedsTheRightSecretAndUser() throws {
        var table = SessionTable(limits: limits)
        guard case .opened(let record, _) = try table.login(login("alice", on: 1), secret: "secret", tokenExpiresAt: nil, now: .zero) else {
            return
        }
        _ = table.connectionDropped(ConnectionID(1), now: .seconds(1))
        let wrongSecret = try table.login(
            login("alice", on: 2, resume: ResumeTicket(session: record.id, secret: "guess")), secret: "n",
            tokenExpiresAt: nil, now: .seconds(2))
        guard case .opened(let fresh, let replaced) = wrongSecret else {
            Issue.record("a wrong secret must not resume")
            return
        }
        #expect(replaced.map(\.id) == [record.id])
        _ = table.connectionDropped(ConnectionID(2), now: .seconds(3))
        let resumed = try table.login(login("alice", on: 3, resume: fresh.ticket), secret: "x", tokenExpiresAt: nil, now: .seconds(4))
        #expect(resumed == .resumed(table.sessions[fresh.id]!, staleConnection: nil))
        #expect(table.session(on: ConnectionID(3)) == fresh.id)
    }

    @Test func resumeOverAStillAttachedConnectionReportsIt() throws {
        var table = SessionTable(limits: limits)
        guard case .opened(let record, _) = try table.login(login("alice", on: 1), secret: "s", tokenExpiresAt: nil, now: .zero) else {
            return
        }
        let outcome = try table.login(login("alice", on: 2, resume: record.ticket), secret: "x", tokenExpiresAt: nil, now: .zero)
        guard case .resumed(_, let stale) = outcome else {
            Issue.record("expected resume")
            return
        }
        #expect(stale == ConnectionID(1))
        #expect(table.session(on: ConnectionID(1)) == nil)
    }

    @Test func concurrentUserLimit() throws {
        var limited = Limits()
        limited.concurrentUsers = 2
        var table = SessionTable(limits: limited)
        _ = try table.login(login("a", on: 1), secret: "s", tokenExpiresAt: nil, now: .zero)
        _ = try table.login(login("b", on: 2), secret: "s", tokenExpiresAt: nil, now: .zero)
        #expect(throws: RtmError.self) {
            var copy = table
            _ = try copy.login(login("c", on: 3), secret: "s", tokenExpiresAt: nil, now: .zero)
        }
        // The same user logging in again replaces itself and does not count twice.
        _ = try table.login(login("b", on: 4), secret: "s", tokenExpiresAt: nil, now: .zero)
        #expect(table.sessions.count == 2)
    }

    @Test func tokenExpiryWarnsThenEnds() throws {
        var table = SessionTable(limits: limits)
        _ = try table.login(login("alice", on: 1), secret: "s", tokenExpiresAt: 1_000, now: .zero)
        #expect(table.sweep(now: .zero, unixSeconds: 969).isEmpty)
        let warned = table.sweep(now: .zero, unixSeconds: 970)
        if case .tokenWillExpire(_, let left) = warned.first { #expect(left == 30) } else { Issue.record("\(warned)") }
        #expect(table.sweep(now: .zero, unixSeconds: 980).isEmpty)
        let ended = table.sweep(now: .zero, unixSeconds: 1_000)
        if case .tokenExpired = ended.first {} else { Issue.record("\(ended)") }
        #expect(table.sessions.isEmpty)
    }
}
