import Testing
import SwitchboardCore
import SwitchboardSession
import SwitchboardTesting

@Suite struct SessionModuleTests {
    func world() async -> (ModuleHarness, Session) {
        let session = Session()
        let harness = await ModuleHarness(modules: [session])
        for type in [SessionOpened.self, SessionSuspended.self, SessionResumed.self, SessionTimedOut.self, SessionClosed.self] as [any BusEvent.Type] {
            record(type, harness)
        }
        return (harness, session)
    }

    private func record<E: BusEvent>(_ type: E.Type, _ harness: ModuleHarness) {
        harness.recorder.record(type, on: harness.bus)
    }

    @Test func loginOpensASessionAndAttachesIt() async throws {
        let (harness, _) = await world()
        let grant = try await harness.bus.request(Login(connection: ConnectionID(7), appId: "app", userId: "alice", token: ""))
        #expect(!grant.resumed)
        #expect(grant.heartbeatInterval == 5)
        #expect(grant.presenceTimeout == 300)
        #expect(harness.outbox.connection(of: grant.session) == ConnectionID(7))
        let opened = await harness.recorder.waitFor(SessionOpened.self)
        #expect(opened.first?.userId == "alice")
        #expect(try await harness.bus.request(SessionsOfUser(userId: "alice")) == [grant.session])
    }

    @Test func heartbeatLossAndPresenceTimeoutRunOnTheInjectedClock() async throws {
        let (harness, _) = await world()
        let grant = try await harness.bus.request(
            Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 20))
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.bus.request(Heartbeat(session: grant.session))
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(15))  // 15 s of silence: still within 5 + 10
        await harness.clock.waitForSleepers()
        #expect(harness.recorder.events(of: SessionSuspended.self).isEmpty)
        harness.clock.advance(by: .seconds(1))  // 16 s of silence
        let suspended = await harness.recorder.waitFor(SessionSuspended.self)
        #expect(suspended.first?.session == grant.session)
        #expect(harness.outbox.calls.contains(.disconnect(ConnectionID(1), .keepAliveTimeout)))
        #expect(harness.outbox.calls.contains(.detach(grant.session)))
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(20))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed.first?.reason == .timedOut)
        #expect(harness.recorder.events(of: SessionTimedOut.self).count == 1)
        #expect(try await harness.bus.request(SessionsOfUser(userId: "alice")).isEmpty)
    }

    @Test func aDroppedConnectionCanBeResumedInTheWindow() async throws {
        let (harness, _) = await world()
        let grant = try await harness.bus.request(
            Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: "", presenceTimeout: 30))
        harness.bus.publish(ConnectionDropped(connection: ConnectionID(1), session: grant.session))
        await harness.recorder.waitFor(SessionSuspended.self)
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(29))
        let resumed = try await harness.bus.request(
            Login(connection: ConnectionID(2), appId: "app", userId: "alice", token: "", resume: grant.ticket))
        #expect(resumed.resumed)
        #expect(resumed.session == grant.session)
        await harness.recorder.waitFor(SessionResumed.self)
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(10))
        await harness.clock.waitForSleepers()
        #expect(harness.recorder.events(of: SessionClosed.self).isEmpty)
        #expect(harness.outbox.connection(of: grant.session) == ConnectionID(2))
    }

    @Test func aSecondLoginKicksTheFirstWithSameUidLogin() async throws {
        let (harness, _) = await world()
        let first = try await harness.bus.request(Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: ""))
        let second = try await harness.bus.request(Login(connection: ConnectionID(2), appId: "app", userId: "alice", token: ""))
        #expect(first.session != second.session)
        #expect(harness.outbox.calls.contains(.disconnect(ConnectionID(1), .sameUidLogin)))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed.first == SessionClosed(session: first.session, userId: "alice", reason: .replacedBySameUser))
    }

    @Test func logoutEndsAtOnceWithoutGrace() async throws {
        let (harness, _) = await world()
        let grant = try await harness.bus.request(Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: ""))
        _ = try await harness.bus.request(Logout(session: grant.session))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed.first?.reason == .logout)
        #expect(harness.recorder.events(of: SessionSuspended.self).isEmpty)
        await #expect(throws: RtmError.self) { try await harness.bus.request(Heartbeat(session: grant.session)) }
    }

    @Test func tokensAreCheckedByWhateverHandlesVerifyLoginToken() async throws {
        let (harness, _) = await world()
        harness.bus.handle(VerifyLoginToken.self) { request throws(RtmError) in
            guard request.token == "good" else { throw RtmError(.invalidToken, operation: "login", reason: "bad token") }
            return TokenGrant(loginExpiresAt: nil)
        }
        do {
            _ = try await harness.bus.request(Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: "bad"))
            Issue.record("a bad token must be refused")
        } catch {
            #expect(error.code == .invalidToken)
        }
        _ = try await harness.bus.request(Login(connection: ConnectionID(1), appId: "app", userId: "alice", token: "good"))
    }
}
