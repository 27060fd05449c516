import Testing
import SwitchboardCore
import SwitchboardSession
import SwitchboardTestKit

/// The server's API ends a user's sessions, and reads the session counts of its `info`.
extension SessionModuleTests {
    @Test(arguments: [false, true]) func disconnectingAUserEndsItsSessionsAndTellsEachClientItWasKicked(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let alice = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        let bob = try await harness.bus.request(Login(appId: "app", userId: "bob", token: ""))
        let otherAlice = try await harness.bus.request(Login(appId: "other", userId: "alice", token: ""))
        let server = Caller.server(app: "app", userId: "server")

        #expect(try await harness.bus.request(DisconnectUser(caller: server, userId: "alice", detail: "banned")) == 1)
        let closed = await harness.recorder.waitFor(SessionClosed.self)
        #expect(closed == [SessionClosed(caller: alice.caller, reason: .kickedByServer)])
        #expect(harness.outbox.calls.contains(.disconnect(alice.session, .kickedOutByServer)))
        #expect(harness.outbox.calls.contains(.release(alice.session)))
        // Nobody else: not bob, not the user of the same id in another app.
        #expect(!harness.outbox.calls.contains(.disconnect(bob.session, .kickedOutByServer)))
        #expect(!harness.outbox.calls.contains(.disconnect(otherAlice.session, .kickedOutByServer)))
        await #expect(throws: RtmError.self) { _ = try await harness.bus.request(Heartbeat(caller: alice.caller)) }
        _ = try await harness.bus.request(Heartbeat(caller: otherAlice.caller))

        #expect(try await harness.bus.request(DisconnectUser(caller: server, userId: "alice")) == 0)
        await #expect(throws: RtmError.self) { _ = try await harness.bus.request(DisconnectUser(caller: server, userId: "")) }
        await harness.stop()
    }

    @Test(arguments: [false, true]) func statisticsCountSessionsSuspendedOnesAndUsersPerApp(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let alice = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        _ = try await harness.bus.request(Login(appId: "app", userId: "bob", token: ""))
        _ = try await harness.bus.request(Login(appId: "other", userId: "carol", token: ""))
        harness.bus.publish(SessionDisconnected(session: alice.session))
        await harness.recorder.waitFor(SessionSuspended.self)
        #expect(try await harness.bus.request(SessionStatistics(app: "app")) == SessionCounts(sessions: 2, suspended: 1, users: 2))
        #expect(try await harness.bus.request(SessionStatistics()) == SessionCounts(sessions: 3, suspended: 1, users: 3))
        #expect(try await harness.bus.request(SessionStatistics(app: "nobody")) == SessionCounts())
        await harness.stop()
    }
}

extension SessionModuleTests {
    @Test(arguments: [false, true]) func listingAUsersSessionsTellsWhetherEachIsConnectedAndChangesNothing(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let alice = try await harness.bus.request(Login(appId: "app", userId: "alice", token: "", heartbeatInterval: 7, presenceTimeout: 60))
        _ = try await harness.bus.request(Login(appId: "other", userId: "alice", token: ""))
        let server = Caller.server(app: "app", userId: "server")

        let live = try await harness.bus.request(ListUserSessions(caller: server, userId: "alice"))
        #expect(live.map(\.session) == [alice.session])
        #expect(live.first?.suspendedAt == nil)
        #expect(live.first?.heartbeatInterval == alice.heartbeatInterval)
        #expect(live.first?.presenceTimeout == alice.presenceTimeout)

        harness.bus.publish(SessionDisconnected(session: alice.session))
        await harness.recorder.waitFor(SessionSuspended.self)
        let suspended = try await harness.bus.request(ListUserSessions(caller: server, userId: "alice"))
        #expect(suspended.map(\.session) == [alice.session])
        #expect(suspended.first?.suspendedAt != nil)
        // Listing ended nothing: the session still resumes.
        _ = try await harness.bus.request(Heartbeat(caller: alice.caller))

        #expect(try await harness.bus.request(ListUserSessions(caller: server, userId: "bob")).isEmpty)
        await #expect(throws: RtmError.self) { _ = try await harness.bus.request(ListUserSessions(caller: server, userId: "")) }
        await harness.stop()
    }
}

extension SessionRelayTests {
    @Test(arguments: [false, true]) func disconnectingAUserIsAnsweredOnceTheRelayStoppedListeningForIt(suspendingStore: Bool) async throws {
        let relay = FakeRelay()
        let session = suspendingStore ? Session(store: SuspendingSessionStore()) : Session()
        let harness = await ModuleHarness(modules: [session, relay])
        _ = try await harness.bus.request(Login(appId: "app", userId: "alice", token: ""))
        let server = Caller.server(app: "app", userId: "server")
        #expect(try await harness.bus.request(DisconnectUser(caller: server, userId: "alice")) == 1)
        #expect(relay.closed == [.user(UserKey("app", "alice"))])
        // A user with no session here leaves the relay alone.
        #expect(try await harness.bus.request(DisconnectUser(caller: server, userId: "bob")) == 0)
        #expect(relay.closed == [.user(UserKey("app", "alice"))])
        await harness.stop()
    }
}
