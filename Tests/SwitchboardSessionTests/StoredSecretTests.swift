import Testing
import SwitchboardCore
@testable import SwitchboardSession

/// A session record keeps its resume secret compactly when it can, and always gives back exactly
/// the text it was given: a resume with that text finds the session, any other text does not.
@Suite(.timeLimit(.minutes(1))) struct StoredSecretTests {
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    func record(_ secret: String) -> SessionRecord {
        SessionRecord(
            caller: Caller(app: "app", userId: "alice", session: SessionID(1)), secret: secret, heartbeatInterval: 5,
            presenceTimeout: 30, lastSeen: start, suspendedAt: nil, tokenExpiresAt: nil)
    }

    @Test func everySecretComesBackAsItWasGiven() {
        var generated: [String] = []
        for _ in 0..<200 { generated.append(Session.randomSecret()) }
        let edges = [
            "", "s", String(repeating: "0", count: 32), String(repeating: "f", count: 32),
            "0123456789ABCDEF0123456789abcdef",  // upper case: kept as text, not folded
            String(repeating: "a", count: 31), String(repeating: "a", count: 33), "0123456789abcdeg0123456789abcdef",
            "écrire-un-secret-de-32-octets!", "0x23456789abcdef0123456789abcdef",
        ]
        for secret in generated + edges {
            #expect(record(secret).secret == secret)
            #expect(record(secret).ticket.secret == secret)
        }
    }

    @Test func recordsAreEqualExactlyWhenTheirSecretsAre() {
        let lower = "0123456789abcdef0123456789abcdef"
        let upper = lower.uppercased()
        #expect(record(lower) == record(lower))
        #expect(record(lower) != record(upper))
        #expect(record(upper) == record(upper))
        #expect(record(lower) != record("0123456789abcdef0123456789abcdee"))
        #expect(Set([record(lower), record(upper), record(lower)]).count == 2)
    }

    @Test func aResumeFindsTheSessionOnlyWithItsOwnSecret() throws {
        var table = SessionTable(limits: Limits())
        let secret = Session.randomSecret()
        guard case .opened(let opened, _) = try table.login(
            Login(appId: "app", userId: "alice", token: "", resume: nil), secret: secret, tokenExpiresAt: nil, now: start)
        else {
            Issue.record("the first login must open a session")
            return
        }
        #expect(opened.ticket.secret == secret)
        let resumed = try table.login(
            Login(appId: "app", userId: "alice", token: "", resume: opened.ticket), secret: Session.randomSecret(),
            tokenExpiresAt: nil, now: start)
        guard case .resumed(let again, _) = resumed else {
            Issue.record("its own secret must resume the session")
            return
        }
        #expect(again.id == opened.id)
        // One hex digit off: a new session, which replaces the old one.
        var wrong = Array(secret.utf8)
        wrong[31] = wrong[31] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        let forged = ResumeTicket(session: opened.id, secret: String(decoding: wrong, as: UTF8.self))
        let refused = try table.login(
            Login(appId: "app", userId: "alice", token: "", resume: forged), secret: Session.randomSecret(),
            tokenExpiresAt: nil, now: start)
        guard case .opened(let other, let replaced) = refused else {
            Issue.record("a wrong secret must not resume the session")
            return
        }
        #expect(other.id != opened.id)
        #expect(replaced.map(\.id) == [opened.id])
    }
}
