import Foundation
import Testing
@testable import SwitchboardClient
@testable import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Alice publishes on "room"; Bob is subscribed and runs on a manual clock, so he reconnects only
/// when a test lets time pass for him.
struct ResumeScene {
    let server: SwitchboardServer
    let alice: RtmClientKit
    let bob: RtmClientKit
    let bobLog: EventLog
    let bobClock: ManualClock

    init(limits: Limits = Limits()) async throws {
        server = try await TestServer.start(limits: limits)
        (alice, _) = try makeClient("alice", server: server)
        bobClock = ManualClock()
        (bob, bobLog) = try makeClient("bob", server: server, clock: bobClock)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
    }

    /// Lets Bob's reconnect pause run out.
    func letBobReconnect(sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await bobClock.waitForSleepers(), "bob's client never paused", sourceLocation: sourceLocation)
        bobClock.advance(by: .seconds(1))
    }

    func end() async {
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }
}

@Suite(.timeLimit(.minutes(5))) struct ConnectionTests {
    @Test func aCutConnectionResumesWithNoLostMessage() async throws {
        let scene = try await ResumeScene()
        let server = scene.server
        let alice = scene.alice
        let bobLog = scene.bobLog
        let direct = RtmPublishOptions()
        direct.channelType = .user
        for index in 0..<10 {
            expectOK(await alice.publish(channelName: "room", message: "before \(index)", option: nil))
        }
        server.dropConnections(ofUser: "bob")
        // Everything below is published while bob is away: the server keeps it for him.
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        for index in 0..<40 {
            expectOK(await alice.publish(channelName: "room", message: "during \(index)", option: nil))
            if index == 20 { expectOK(await alice.publish(channelName: "bob", message: "direct", option: direct)) }
        }
        #expect(bobLog.messages.count == 10)
        await scene.letBobReconnect()
        #expect(await bobLog.wait { log in log.linkStates.contains { $0.currentState == .connected && $0.operation == .reconnected } })
        expectOK(await alice.publish(channelName: "room", message: "end", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "end" })
        let room = bobLog.messages.filter { $0.channelType == .message }.compactMap(\.message.stringData).dropLast()
        #expect(Array(room) == (0..<10).map { "before \($0)" } + (0..<40).map { "during \($0)" })
        #expect(bobLog.messages.filter { $0.channelType == .user }.map(\.message.stringData) == ["direct"])
        let states = bobLog.linkStates
        let lost = try #require(states.first { $0.currentState == .disconnected })
        #expect(lost.previousState == .connected)
        #expect(lost.affectedChannels == ["room"])
        let back = try #require(states.last)
        #expect(back.currentState == .connected)
        #expect(back.previousState == .disconnected)
        #expect(back.reasonCode == .reconnectSuccess)
        #expect(back.isResumed)
        #expect(back.unrestoredChannels.isEmpty)
        // The subscription stood through the cut.
        expectOK(await alice.publish(channelName: "room", message: "after", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "after" })
        await scene.end()
    }

    @Test func aHalfOpenConnectionLosesNothingOnResume() async throws {
        let scene = try await ResumeScene()
        let alice = scene.alice
        let bob = scene.bob
        let bobLog = scene.bobLog
        for index in 0..<3 { expectOK(await alice.publish(channelName: "room", message: "\(index)", option: nil)) }
        #expect(await bobLog.wait { $0.messages.count == 3 })
        // Bob's network dies silently: the server still writes to his old connection, unread,
        // channel messages and messages sent to him alone alike.
        await bob.loseConnectionSilently()
        // The loss reaches the log before the return is awaited: else the login's own
        // "connected" could pass for the return.
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        let direct = RtmPublishOptions()
        direct.channelType = .user
        for index in 3..<8 {
            expectOK(await alice.publish(channelName: "room", message: "\(index)", option: nil))
            expectOK(await alice.publish(channelName: "bob", message: "direct \(index)", option: direct))
        }
        await scene.letBobReconnect()
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected })
        #expect(bobLog.linkStates.last?.isResumed == true)
        expectOK(await alice.publish(channelName: "room", message: "end", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "end" })
        #expect(
            bobLog.messages.compactMap(\.message.stringData)
                == (0..<3).map { "\($0)" } + (3..<8).flatMap { ["\($0)", "direct \($0)"] } + ["end"])
        await scene.end()
    }

    @Test func pastTheResumeBoundTheMostRecentComeBack() async throws {
        var limits = Limits()
        limits.sessions.resumeBufferMaxMessages = 5
        let scene = try await ResumeScene(limits: limits)
        let server = scene.server
        let alice = scene.alice
        let bobLog = scene.bobLog
        server.dropConnections(ofUser: "bob")
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        for index in 0..<8 { expectOK(await alice.publish(channelName: "room", message: "\(index)", option: nil)) }
        await scene.letBobReconnect()
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected })
        let back = try #require(bobLog.linkStates.last)
        #expect(back.isResumed)
        // The subscription itself was kept: lost messages do not make a channel unrestored.
        #expect(back.unrestoredChannels.isEmpty)
        // The most recent five come back, in order; the three before them are lost.
        expectOK(await alice.publish(channelName: "room", message: "end", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "end" })
        #expect(bobLog.messages.compactMap(\.message.stringData) == ["3", "4", "5", "6", "7", "end"])
        await scene.end()
    }

    @Test func aLostSessionIsRebuiltBySubscribingAgain() async throws {
        // A server restart loses every session: the client logs in anew and subscribes again by itself.
        var server = try await TestServer.start()
        let port = try #require(server.port)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        await server.shutdown()
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        server = try await TestServer.start(configure: { $0.port = port })
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected })
        let back = try #require(bobLog.linkStates.last)
        #expect(!back.isResumed)
        #expect(back.unrestoredChannels.isEmpty)
        let (alice, _) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        expectOK(await alice.publish(channelName: "room", message: "welcome back", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "welcome back" })
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aSecondLoginWithTheSameUserIdKicksTheFirst() async throws {
        let server = try await TestServer.start()
        let (first, firstLog) = try makeClient("alice", server: server)
        let (second, _) = try makeClient("alice", server: server)
        expectOK(await first.login(""))
        expectOK(await second.login(""))
        #expect(await firstLog.wait { $0.linkStates.last?.currentState == .failed })
        let kicked = try #require(firstLog.linkStates.last)
        #expect(kicked.reasonCode == .sameUidLogin)
        #expect(kicked.previousState == .connected)
        #expect(kicked.operation == .serverReject)
        expectError(.notLogin, await first.publish(channelName: "room", message: "x", option: nil))
        expectOK(await second.publish(channelName: "room", message: "x", option: nil))
        first.destroy()
        second.destroy()
        await server.shutdown()
    }

    @Test func reconnectTimeoutEndsInFailed() async throws {
        let server = try await TestServer.start()
        let clock = ManualClock()
        let (client, log) = try makeClient("alice", server: server, clock: clock) { $0.reconnectTimeout = 20 }
        expectOK(await client.login(""))
        await server.shutdown()
        #expect(await log.wait { $0.linkStates.last?.currentState == .disconnected })
        for _ in 0..<30 where log.linkStates.last?.currentState != .failed {
            // Not sleeping yet is no failure here: the loop looks at the state itself.
            _ = await clock.waitForSleepers(timeout: .milliseconds(250))
            clock.advance(by: .seconds(1))
            try? await Task.sleep(for: .milliseconds(5))
        }
        #expect(await log.wait { $0.linkStates.last?.currentState == .failed })
        #expect(log.linkStates.last?.reasonCode == .reconnectTimeout)
        client.destroy()
    }

    @Test func logoutIsImmediateAndCallsAfterItNeedALogin() async throws {
        let server = try await TestServer.start()
        let (client, log) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        expectOK(await client.subscribe(channelName: "room", option: nil))
        expectOK(await client.logout())
        #expect(await log.wait { $0.linkStates.last?.currentState == .idle })
        #expect(log.linkStates.last?.reasonCode == .logout)
        expectError(.notLogin, await client.subscribe(channelName: "room", option: nil))
        expectError(.notLogin, await client.logout())
        expectOK(await client.login(""))
        client.destroy()
        await server.shutdown()
    }

    @Test func configurationErrorsAreThrownAtCreation() throws {
        let config = RtmClientConfig(appId: "app", userId: "")
        #expect(throws: RtmErrorInfo.self) { try RtmClientKit(config, delegate: nil) }
        let badServer = RtmClientConfig(appId: "app", userId: "alice")
        badServer.privateConfig = RtmPrivateConfig()
        badServer.privateConfig?.accessPointHosts = ["ftp://127.0.0.1:21"]
        do {
            _ = try RtmClientKit(badServer, delegate: nil)
            Issue.record("a client with an unreadable server address must not be created")
        } catch let error as RtmErrorInfo {
            #expect(error.errorCode == .invalidPrivateConfig)
        }
        let badSalt = RtmClientConfig(appId: "app", userId: "alice")
        badSalt.privateConfig = RtmPrivateConfig()
        badSalt.privateConfig?.accessPointHosts = ["ws://127.0.0.1:1"]
        badSalt.encryptionConfig = RtmEncryptionConfig()
        badSalt.encryptionConfig?.encryptionMode = .AES256GCM
        badSalt.encryptionConfig?.encryptionKey = "key"
        badSalt.encryptionConfig?.encryptionKdfSalt = Data(count: 5)
        do {
            _ = try RtmClientKit(badSalt, delegate: nil)
            Issue.record("a 5-byte salt must be refused")
        } catch let error as RtmErrorInfo {
            #expect(error.errorCode == .invalidEncryptionParameter)
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct DestroyTests {
    @Test func destroyStopsALoginThatIsStillTryingToConnect() async throws {
        // Nothing listens on this port: the login keeps retrying until the client is destroyed.
        let config = RtmClientConfig(appId: "app", userId: "alice")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = ["ws://127.0.0.1:9"]
        let client = try RtmClientKit(config, delegate: nil)
        let log = EventLog(client)
        let login = Task { await client.login("") }
        #expect(await log.wait { $0.linkStates.last?.currentState == .connecting })
        client.destroy()
        let result = await login.value
        #expect(result.1?.errorCode == .loginCanceled)
        #expect(await client.login("").1?.errorCode == .notInitialized)
    }
}

@Suite(.timeLimit(.minutes(5))) struct ResumeBudgetTests {
    @Test func pastTheServerWideBudgetTheSessionDetachedLongestAgoLosesItsOldest() async throws {
        var limits = Limits()
        limits.sessions.resumeBufferTotalBytes = 2_000
        let server = try await TestServer.start(limits: limits)
        let (alice, _) = try makeClient("alice", server: server)
        let bobClock = ManualClock(), carolClock = ManualClock()
        let (bob, bobLog) = try makeClient("bob", server: server, clock: bobClock)
        let (carol, carolLog) = try makeClient("carol", server: server, clock: carolClock)
        for client in [alice, bob, carol] { expectOK(await client.login("")) }
        for client in [bob, carol] { expectOK(await client.subscribe(channelName: "room", option: nil)) }
        server.dropConnections(ofUser: "bob")
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        server.dropConnections(ofUser: "carol")
        #expect(await carolLog.wait { $0.linkStates.last?.currentState == .disconnected })
        let body = String(repeating: "x", count: 90)
        for index in 0..<10 { expectOK(await alice.publish(channelName: "room", message: "\(index) \(body)", option: nil)) }
        for clock in [bobClock, carolClock] {
            #expect(await clock.waitForSleepers())
            clock.advance(by: .seconds(1))
        }
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected })
        #expect(await carolLog.wait { $0.messages.count == 10 })
        expectOK(await alice.publish(channelName: "room", message: "end", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "end" })
        let bobGot = bobLog.messages.compactMap { $0.message.stringData?.split(separator: " ").first.map(String.init) }
        // Carol, detached last, kept everything; Bob kept only the most recent, with no gap.
        #expect(bobGot.count < 11)
        #expect(bobGot.count >= 2)
        #expect(bobGot == Array((0..<10).map(String.init).suffix(bobGot.count - 1)) + ["end"])
        for client in [alice, bob, carol] { client.destroy() }
        await server.shutdown()
    }
}
