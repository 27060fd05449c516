import Foundation
import Synchronization
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// With an app certificate the server takes only tokens signed with it.
@Suite(.timeLimit(.minutes(5))) struct TokenLoginTests {
    static let appId = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    func client(_ userId: String, _ server: SwitchboardServer) throws -> RtmClientKit {
        let config = RtmClientConfig(appId: Self.appId, userId: userId)
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [server.url]
        return try RtmClientKit(config, delegate: nil)
    }

    func token(for userId: String, expire: UInt32 = 3600) throws -> String {
        try TokenMinter.mint007(
            appId: Self.appId, appCertificate: Self.certificate, userId: userId,
            issuedAt: UInt32(Date().timeIntervalSince1970), expireSeconds: expire, salt: 99)
    }

    @Test func onlySignedTokensForTheRightUserLogIn() async throws {
        let server = try await TestServer.start(modules: {
            $0.extensions.append(Crypto(credentials: [Self.appId: Self.certificate]))
        })
        let alice = try client("alice", server)
        let events = alice.events
        let states = Task {
            var seen: [RtmLinkStateEvent] = []
            for await event in events {
                if case .linkState(let change) = event { seen.append(change) }
                if seen.count == 2 { break }
            }
            return seen
        }
        let refused = await alice.login("not a token")
        #expect(refused.1?.errorCode == .invalidToken)
        let changes = await states.value
        #expect(changes.map(\.currentState) == [.connecting, .failed])
        #expect(changes.last?.reasonCode == .invalidToken)
        #expect(await alice.login(try token(for: "bob")).1?.errorCode == .invalidToken)
        #expect(await alice.login(try token(for: "alice")).1 == nil)
        alice.destroy()
        await server.shutdown()
    }

    @Test func aTokenFromTheReferenceBuilderLogsInOverTheWire() async throws {
        let server = try await TestServer.start(modules: {
            $0.extensions.append(Crypto(credentials: [Self.appId: Self.certificate]))
        })
        let expiresAt = UInt64(Date().timeIntervalSince1970) + 3600
        let minted = try await ProcessRunner.python(
            "reference_tokens.py", [Self.appId, Self.certificate, "alice", String(expiresAt)])
        try #require(minted.status == 0, "tools/reference_tokens.py failed: \(minted.text)")
        let token = minted.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("006"))
        let (alice, bob) = (try client("alice", server), try client("bob", server))
        #expect(await bob.login(token).1?.errorCode == .invalidToken, "the token is alice's")
        #expect(await alice.login(token).1 == nil)
        #expect(await alice.publish(channelName: "room", message: "signed in by the reference", option: nil).1 == nil)
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func developmentModeTakesAnyToken() async throws {
        let server = try await TestServer.start()
        let alice = try client("alice", server)
        #expect(await alice.login("whatever").1 == nil)
        alice.destroy()
        await server.shutdown()
    }
}

/// Token lifetime end to end: the warning 30 s before, renewal, and the end of an unrenewed session.
@Suite(.timeLimit(.minutes(5))) struct TokenLifetimeTests {
    final class Watcher: NSObject, RtmClientDelegate, Sendable {
        let count = Atomic<Int>(0)
        var warnings: Int { count.load(ordering: .relaxed) }
        func rtmKit(_ rtmKit: RtmClientKit, tokenPrivilegeWillExpire channel: String?) {
            count.add(1, ordering: .relaxed)
        }
    }

    @Test func theClientIsWarnedThenLoggedOutUnlessItRenews() async throws {
        let clock = ManualClock()
        let server = try await TestServer.start(clock: clock, modules: {
            $0.extensions.append(Crypto(credentials: [TokenLoginTests.appId: TokenLoginTests.certificate]))
        })
        let issuedAt = UInt32(clock.wallMilliseconds / 1000)
        func token(_ userId: String, expire: UInt32) throws -> String {
            try TokenMinter.mint007(
                appId: TokenLoginTests.appId, appCertificate: TokenLoginTests.certificate, userId: userId,
                issuedAt: issuedAt, expireSeconds: expire, salt: 7)
        }
        func client(_ userId: String) throws -> RtmClientKit {
            let config = RtmClientConfig(appId: TokenLoginTests.appId, userId: userId)
            config.heartbeatInterval = 600
            config.privateConfig = RtmPrivateConfig()
            config.privateConfig?.accessPointHosts = [server.url]
            return try RtmClientKit(config, delegate: nil)
        }
        let alice = try client("alice"), bob = try client("bob")
        let aliceWatcher = Watcher(), bobWatcher = Watcher()
        alice.addDelegate(aliceWatcher)
        bob.addDelegate(bobWatcher)
        let aliceEvents = alice.events
        let aliceEnd = Task { () -> RtmLinkStateChangeReason? in
            for await event in aliceEvents {
                if case .linkState(let change) = event, change.currentState == .failed { return change.reasonCode }
            }
            return nil
        }
        #expect(await alice.login(try token("alice", expire: 100)).1 == nil)
        #expect(await bob.login(try token("bob", expire: 100)).1 == nil)

        for _ in 0..<71 { clock.advance(by: .seconds(1)); #expect(await clock.waitForSleepers()) }
        for _ in 0..<500 where aliceWatcher.warnings + bobWatcher.warnings < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(aliceWatcher.warnings == 1)
        #expect(bobWatcher.warnings == 1)
        #expect(await bob.renewToken(try token("bob", expire: 1_000)).1 == nil)
        #expect(await bob.renewToken("forged").1?.errorCode == .invalidToken)

        for _ in 0..<30 { clock.advance(by: .seconds(1)); #expect(await clock.waitForSleepers()) }
        #expect(await aliceEnd.value == .tokenExpired)
        #expect(await bob.publish(channelName: "room", message: "still here", option: nil).1 == nil)
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }
}
