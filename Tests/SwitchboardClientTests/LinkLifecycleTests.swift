import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
@testable import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// The link states and call outcomes an app sees around login, logout, renewal and long outages.
@Suite(.timeLimit(.minutes(5))) struct LinkLifecycleTests {
    /// A client whose only access point has nothing listening: its login retries for ever.
    func unreachableClient(clock: any SwitchboardClock = SystemClock()) throws -> (RtmClientKit, EventLog) {
        let config = RtmClientConfig(appId: "app", userId: "alice")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = ["ws://127.0.0.1:9"]
        let client = try RtmClientKit(config, delegate: nil, clock: clock)
        return (client, EventLog(client))
    }

    @Test(.timeLimit(.minutes(1))) func aCompletionFormLoginIsCanceledByLogout() async throws {
        let (client, log) = try unreachableClient()
        let outcomes = Mutex<[String: RtmErrorCode]>([:])
        let loginDone = OneShot<Void>()
        let logoutDone = OneShot<Void>()
        client.login("") { _, error in
            outcomes.withLock { $0["login"] = error?.errorCode ?? .ok }
            loginDone.fulfil(())
        }
        #expect(await log.wait { $0.linkStates.last?.currentState == .connecting })
        client.logout { _, error in
            outcomes.withLock { $0["logout"] = error?.errorCode ?? .ok }
            logoutDone.fulfil(())
        }
        await loginDone.value
        await logoutDone.value
        #expect(outcomes.withLock { $0 } == ["login": .loginCanceled, "logout": .ok])
        #expect(await client.linkState == .idle)
        #expect(await log.wait { $0.linkStates.count >= 2 })
        #expect(log.linkStates.map(\.currentState) == [.connecting, .idle])
        client.destroy()
    }

    @Test(.timeLimit(.minutes(1))) func aSecondLoginCancelsThePendingOneAndRunsItself() async throws {
        let server = try await TestServer.start()
        let clock = ManualClock()
        let config = RtmClientConfig(appId: "test-app", userId: "alice")
        config.privateConfig = RtmPrivateConfig()
        // The first attempt goes to a dead address and waits for its retry; the next to the server.
        config.privateConfig?.accessPointHosts = ["ws://127.0.0.1:9", server.url]
        let client = try RtmClientKit(config, delegate: nil, clock: clock)
        let log = EventLog(client)
        let first = Task { await client.login("") }
        #expect(await clock.waitForSleepers())
        let second = await client.login("")
        #expect(second.1 == nil, "\(String(describing: second.1))")
        #expect(await first.value.1?.errorCode == .loginCanceled)
        #expect(await log.wait { $0.linkStates.count >= 2 })
        #expect(log.linkStates.map(\.currentState) == [.connecting, .connected])
        client.destroy()
        await server.shutdown()
    }

    @Test func destroyStopsEveryAttemptAtOnce() async throws {
        let attempts = LoginCounter()
        let server = try await TestServer.start(modules: { $0.session = attempts })
        let config = RtmClientConfig(appId: "test-app", userId: "alice")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [server.url]
        let client = try RtmClientKit(config, delegate: nil)
        let login = Task { await client.login("") }
        #expect(await attempts.waitFor(count: 3))
        client.destroy()
        #expect(await login.value.1?.errorCode == .loginCanceled)
        let atDestroy = attempts.count
        try await Task.sleep(for: .milliseconds(800))  // more than the next backoff pauses
        #expect(attempts.count <= atDestroy + 1, "an attempt already on its way may land; no later ones")
        await server.shutdown()
    }

    @Test func aCleanLogoutReportsOnlyTheReferenceStatesEveryTime() async throws {
        let server = try await TestServer.start()
        for round in 0..<8 {
            let (client, log) = try makeClient("alice\(round)", server: server)
            expectOK(await client.login(""))
            expectOK(await client.subscribe(channelName: "room", option: nil))
            expectOK(await client.logout())
            // Logging in again: a late socket close of the first session would show up before it.
            expectOK(await client.login(""))
            #expect(await log.wait { $0.linkStates.count >= 5 })
            #expect(log.linkStates.map(\.currentState) == [.connecting, .connected, .idle, .connecting, .connected], "round \(round)")
            #expect(log.linkStates[2].reasonCode == .logout)
            client.destroy()
        }
        await server.shutdown()
    }

    @Test func aRefusedRenewalKeepsTheTokenForReconnects() async throws {
        let tokens = FakeTokenChecks()
        tokens.allow("t1", for: "alice")
        let server = try await TestServer.start(modules: { $0.extensions.append(tokens) })
        let (client, log) = try makeClient("alice", server: server)
        expectOK(await client.login("t1"))
        expectError(.invalidToken, await client.renewToken("forged"))
        server.dropConnections(ofUser: "alice")
        #expect(await log.wait { $0.linkStates.contains { $0.operation == .reconnected } })
        #expect(log.linkStates.last?.currentState == .connected)
        client.destroy()
        await server.shutdown()
    }

    @Test func anOutageLongerThanThePresenceTimeoutSuspendsThenRestores() async throws {
        var server = try await TestServer.start()
        let port = try #require(server.port)
        let clock = ManualClock()
        let (client, log) = try makeClient("bob", server: server, clock: clock) { $0.presenceTimeout = 5 }
        expectOK(await client.login(""))
        expectOK(await client.subscribe(channelName: "room", option: nil))
        await server.shutdown()
        #expect(await log.wait { $0.linkStates.last?.currentState == .disconnected })
        for _ in 0..<40 where log.linkStates.last?.currentState != .suspended {
            // Not sleeping yet is no failure here: the loop looks at the state itself.
            _ = await clock.waitForSleepers(timeout: .milliseconds(250))
            clock.advance(by: .milliseconds(500))
            try? await Task.sleep(for: .milliseconds(2))
        }
        #expect(await log.wait { $0.linkStates.last?.currentState == .suspended })
        let suspended = try #require(log.linkStates.last)
        #expect(suspended.previousState == .disconnected)
        #expect(suspended.affectedChannels == ["room"])
        server = try await TestServer.start(configure: { $0.port = port })
        // One pause of at most 5 s separates reconnect attempts; after it, time stands still, so
        // the re-subscription on the new session cannot time out.
        #expect(await clock.waitForSleepers())
        clock.advance(by: .seconds(5))
        #expect(await log.wait { $0.linkStates.last?.currentState == .connected })
        let back = try #require(log.linkStates.last)
        #expect(back.previousState == .suspended)
        #expect(!back.isResumed)
        #expect(back.unrestoredChannels.isEmpty)
        client.destroy()
        await server.shutdown()
    }
}

/// A session module that refuses every login with a retryable error and counts them.
private final class LoginCounter: Module {
    let name = "login-counter"
    private let logins = Mutex(0)

    var count: Int { logins.withLock { $0 } }

    func start(_ context: ModuleContext) async {
        context.bus.handle(Login.self) { [self] _ throws(RtmError) in
            logins.withLock { $0 += 1 }
            throw RtmError(.loginTimeout, operation: "login", reason: "try again")
        }
    }

    func waitFor(count wanted: Int) async -> Bool {
        for _ in 0..<500 {
            if count >= wanted { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
