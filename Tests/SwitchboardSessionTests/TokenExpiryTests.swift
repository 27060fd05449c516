import Testing
import SwitchboardCore
import SwitchboardSession
import SwitchboardTestKit

/// Token expiry runs on the injected clock: a warning 30 s before, then the session ends.
@Suite(.timeLimit(.minutes(2))) struct TokenExpiryTests {
    @Test func expiringTokensWarnThenEndTheSessionUnlessRenewed() async throws {
        let tokens = FakeTokenChecks()
        let harness = await ModuleHarness(modules: [tokens, Session()])
        harness.recorder.record(SessionClosed.self, on: harness.bus)
        let start = harness.clock.wallMilliseconds / 1000
        tokens.allow("t1", for: "alice", expiresAt: start + 60)
        tokens.allow("t1", for: "bob", expiresAt: start + 60)
        let alice = try await harness.bus.request(Login(appId: "app", userId: "alice", token: "t1", heartbeatInterval: 100))
        let bob = try await harness.bus.request(Login(appId: "app", userId: "bob", token: "t1", heartbeatInterval: 100))
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(31))
        #expect(await harness.clock.waitForSleepers())
        #expect(harness.outbox.pushes(to: alice.session) == [.session(.tokenPrivilegeWillExpire(secondsLeft: 29))])
        tokens.allow("t2", for: "bob", expiresAt: start + 600)
        _ = try await harness.bus.request(RenewToken(caller: bob.caller, token: "t2"))
        _ = try await harness.bus.request(Heartbeat(caller: alice.caller))
        _ = try await harness.bus.request(Heartbeat(caller: bob.caller))
        harness.clock.advance(by: .seconds(30))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed == [SessionClosed(caller: alice.caller, reason: .tokenExpired)])
        #expect(harness.outbox.calls.contains(.disconnect(alice.session, .tokenExpired)))
        do {
            _ = try await harness.bus.request(RenewToken(caller: bob.caller, token: "forged"))
            Issue.record("a forged token must not renew")
        } catch {
            #expect(error.code == .invalidToken)
            #expect(error.operation == "renewToken")
        }
        await harness.stop()
    }
}
