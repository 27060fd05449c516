import Testing
import SwitchboardCore
import SwitchboardSession
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct SessionModuleTests {
    /// A session module over an in-memory store, or (`suspendingStore`) over one that suspends on
    /// every call.
    func world(suspendingStore: Bool = false) async -> (ModuleHarness, Session) {
        let session = suspendingStore ? Session(store: SuspendingSessionStore()) : Session()
        let harness = await ModuleHarness(modules: [session])
        for type in [SessionOpened.self, SessionSuspended.self, SessionResumed.self, SessionTimedOut.self, SessionClosed.self] as [any BusEvent.Type] {
            record(type, harness)
        }
        return (harness, session)
    }

    private func record<E: BusEvent>(_ type: E.Type, _ harness: ModuleHarness) {
        harness.recorder.record(type, on: harness.bus)
    }

    @Test(arguments: [false, true]) func loginOpensASessionAndItsOutlet(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let grant = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        #expect(!grant.resumed)
        #expect(grant.heartbeatInterval == 5)
        #expect(grant.presenceTimeout == 300)
        #expect(grant.caller == Caller(app: "app", userId: "alice", session: grant.session))
        #expect(harness.outbox.isOpen(grant.session))
        let opened = await harness.recorder.waitFor(SessionOpened.self)
        #expect(opened.first?.caller == grant.caller)
        await harness.stop()
    }

    @Test(arguments: [false, true]) func heartbeatLossAndPresenceTimeoutRunOnTheInjectedClock(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let grant = try await harness.bus.request(
            Login(appId: "app", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 20))
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.bus.request(Heartbeat(caller: grant.caller))
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(15))  // 15 s of silence: still within 5 + 10
        #expect(await harness.clock.waitForSleepers())
        #expect(harness.recorder.events(of: SessionSuspended.self).isEmpty)
        harness.clock.advance(by: .seconds(1))  // 16 s of silence
        let suspended = await harness.recorder.waitFor(SessionSuspended.self)
        #expect(suspended.first?.caller == grant.caller)
        #expect(harness.outbox.calls.contains(.disconnect(grant.session, .keepAliveTimeout)))
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(20))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed.first?.reason == .timedOut)
        #expect(harness.recorder.events(of: SessionTimedOut.self).count == 1)
        #expect(harness.outbox.calls.last == .release(grant.session))
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aLostConnectionCanBeResumedInTheWindow(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let grant = try await harness.bus.request(Login(appId: "app", userId: "alice", token: "", presenceTimeout: 30))
        harness.bus.publish(SessionDisconnected(session: grant.session))
        await harness.recorder.waitFor(SessionSuspended.self)
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(29))
        let resumed = try await harness.bus.request(Login(appId: "app", userId: "alice", token: "", resume: grant.ticket))
        #expect(resumed.resumed)
        #expect(resumed.session == grant.session)
        await harness.recorder.waitFor(SessionResumed.self)
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(10))
        #expect(await harness.clock.waitForSleepers())
        #expect(harness.recorder.events(of: SessionClosed.self).isEmpty)
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aSecondLoginKicksTheFirstWithSameUidLogin(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let first = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        let elsewhere = try await harness.bus.request(Login(appId: "other", userId: "alice", token: ""))
        let second = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        #expect(first.session != second.session)
        #expect(harness.outbox.calls.contains(.disconnect(first.session, .sameUidLogin)))
        #expect(!harness.outbox.calls.contains(.disconnect(elsewhere.session, .sameUidLogin)))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed == [SessionClosed(caller: first.caller, reason: .replacedBySameUser)])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func logoutEndsAtOnceWithoutGrace(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let grant = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        _ = try await harness.bus.request(Logout(caller: grant.caller))
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed.first?.reason == .logout)
        #expect(harness.recorder.events(of: SessionSuspended.self).isEmpty)
        #expect(!harness.outbox.isOpen(grant.session))
        await #expect(throws: RtmError.self) { try await harness.bus.request(Heartbeat(caller: grant.caller)) }
        await harness.stop()
    }

    @Test(arguments: [false, true]) func tokensAreCheckedByWhateverHandlesVerifyLoginToken(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        harness.bus.handle(VerifyLoginToken.self) { request throws(RtmError) in
            guard request.token == "good" else { throw RtmError(.invalidToken, operation: "login", reason: "bad token") }
            return TokenGrant(loginExpiresAt: nil)
        }
        do {
            _ = try await harness.bus.request(Login(appId: "app", userId: "alice", token: "bad"))
            Issue.record("a bad token must be refused")
        } catch {
            #expect(error.code == .invalidToken)
        }
        _ = try await harness.bus.request(Login(appId: "app", userId: "alice", token: "good"))
        await harness.stop()
    }

    @Test(arguments: [false, true]) func cancellingRunStopsTheTicker(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        #expect(await harness.clock.waitForSleepers())
        await harness.stop()
        #expect(harness.clock.sleeperCount == 0)
    }
}

@Suite(.timeLimit(.minutes(2))) struct SessionStoreSeamTests {
    @Test func theModuleReachesSessionsOnlyThroughItsStore() async throws {
        let store = SuspendingSessionStore()
        let harness = await ModuleHarness(modules: [Session(store: store)])
        let grant = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        _ = try await harness.bus.request(Heartbeat(caller: grant.caller))
        _ = try await harness.bus.request(Logout(caller: grant.caller))
        #expect(harness.outbox.calls.contains(.release(grant.session)))
        #expect(store.calls.recorded.filter { $0 != "sweep" } == ["checkLogin", "login", "heartbeat", "remove"])
        await harness.stop()
    }
}

@Suite(.timeLimit(.minutes(2))) struct SessionRelayTests {
    @Test(arguments: [false, true]) func aLoginAndALogoutAreAnsweredOnceTheRelayListensOrStopped(suspendingStore: Bool) async throws {
        let relay = FakeRelay()
        let session = suspendingStore ? Session(store: SuspendingSessionStore()) : Session()
        let harness = await ModuleHarness(modules: [session, relay])
        let grant = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        #expect(relay.opened == [.user(UserKey("app", "alice"))])
        #expect(harness.outbox.isOpen(grant.session))
        #expect(relay.closed.isEmpty)
        // A logout is answered once the relay has stopped listening for the user here.
        _ = try await harness.bus.request(Logout(caller: grant.caller))
        #expect(relay.closed == [.user(UserKey("app", "alice"))])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aLoginTheRelayCannotListenForFailsAndEndsItsSession(suspendingStore: Bool) async throws {
        let relay = FakeRelay(openFailure: RtmError(.loginTimeout, operation: OpenRelay.operation, reason: "redis down"))
        let session = suspendingStore ? Session(store: SuspendingSessionStore()) : Session()
        let harness = await ModuleHarness(modules: [session, relay])
        harness.recorder.record(SessionClosed.self, on: harness.bus)
        do {
            _ = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
            Issue.record("the login succeeded")
        } catch {
            #expect(error.code == .loginTimeout)
            #expect(error.operation == Login.operation)
        }
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed.map(\.caller.userId) == ["alice"])
        #expect(closed.allSatisfy { !harness.outbox.isOpen($0.caller.session) })
        await harness.stop()
    }
}
