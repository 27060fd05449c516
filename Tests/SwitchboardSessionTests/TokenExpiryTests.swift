import Testing
import SwitchboardCore
import SwitchboardSession
import SwitchboardTesting

/// Token expiry runs on the injected clock: a warning 30 s before, then the session ends.
@Suite struct TokenExpiryTests {
    @Test func expiringTokensWarnThenEndTheSessionUnlessRenewed() async throws {
        let tokens = FakeTokenChecks()
        let harness = await ModuleHarness(modules: [tokens, Session()])
        harness.recorder.record(SessionClosed.self, on: harness.bus)
        let start = harness.clock.wallMilliseconds / 1000
        tokens.allow("t1", for: "alice", expiresAt: start + 60)
        tokens.allow("t1", for: "bob", expiresAt: start + 60)
        let alice = try await harness.bus.request(Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: "t1", heartbeatInterval: 100))
        let bob = try await harness.bus.request(Login(connection: ConnectionID(2), appId: "app", userId: "bob", token: "t1", heartbeatInterval: 100))
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(31))
        await harness.clock.waitForSleepers()
        #expect(harness.outbox.pushes(to: alice.session) == [.tokenPrivilegeWillExpire(secondsLeft: 29)])
        tokens.allow("t2", for: "bob", expiresAt: start + 600)
        _ = try await harness.bus.request(RenewToken(session: bob.session, token: "t2"))
        _ = try await harness.bus.request(Heartbeat(session: alice.session))
        _ = try await harness.bus.request(Heartbeat(session: bob.session))
        harness.clock.advance(by: .seconds(30))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed == [SessionClosed(session: alice.session, userId: "alice", reason: .tokenExpired)])
        #expect(harness.outbox.calls.contains(.disconnect(ConnectionID(1), .tokenExpired)))
        do {
            _ = try await harness.bus.request(RenewToken(session: bob.session, token: "forged"))
            Issue.record("a forged token must not renew")
        } catch {
            #expect(error.code == .invalidToken)
            #expect(error.operation == "renewToken")
        }
    }
}
