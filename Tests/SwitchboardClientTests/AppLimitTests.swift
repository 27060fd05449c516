import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Two apps on one server, each with its own limits (`ServerConfiguration.appLimits`): each is
/// refused at its own limit with the reference's code while the other goes on; a new edition of
/// the server's limits book (what SIGHUP puts in force) reaches the requests after it.
@Suite(.timeLimit(.minutes(5))) struct AppLimitTests {
    /// `tight`'s limits: few users, channels, bytes, states, locks and publishes.
    static var tight: Limits {
        var limits = Limits.withoutRateLimits
        limits.sessions.concurrentUsers = 1
        limits.messages.subscribedChannelsPerClient = 2
        limits.messages.payloadMaxBytes = 100
        limits.messages.publishesPerSecondPerClient = 2
        limits.presence.statesPerUser = 1
        limits.locks.perChannel = 1
        return limits
    }

    /// A server serving `tight` (its own limits) and `roomy` (the server's) on a clock that stands
    /// still, so every call falls in one second.
    static func start() async throws -> SwitchboardServer {
        try await TestServer.start(clock: ManualClock(), limits: .withoutRateLimits) { configuration in
            configuration.appIds = ["tight", "roomy"]
            configuration.appLimits = ["tight": Self.tight]
        }
    }

    static func client(_ app: String, _ user: String, _ server: SwitchboardServer) throws -> RtmClientKit {
        try makeClient(user, server: server) { $0.appId = app }.0
    }

    @Test func eachAppIsRefusedAtItsOwnLimitAndTheOtherIsNot() async throws {
        let server = try await Self.start()
        let tight = try Self.client("tight", "alice", server), tightBob = try Self.client("tight", "bob", server)
        let roomy = try Self.client("roomy", "alice", server), roomyBob = try Self.client("roomy", "bob", server)
        expectOK(await tight.login(""))
        expectError(.loginNoServerResources, await tightBob.login(""))
        expectOK(await roomy.login(""))
        expectOK(await roomyBob.login(""))

        // Publishes: tight's payload and rate (two a second), then roomy's, far past them.
        let big = Data(count: 101)
        expectError(.channelMessageLengthExceedLimitation, await tight.publish(channelName: "room", data: big, option: nil))
        expectOK(await tight.publish(channelName: "room", message: "second", option: nil))
        expectError(.operationRateExceedLimitation, await tight.publish(channelName: "room", message: "third", option: nil))
        expectOK(await roomy.publish(channelName: "room", data: big, option: nil))
        for index in 0..<5 { expectOK(await roomy.publish(channelName: "room", message: "\(index)", option: nil)) }

        // Subscriptions, presence states and locks.
        let everything = RtmSubscribeOptions()
        everything.features = [.message, .presence, .lock]
        for client in [tight, roomy] {
            expectOK(await client.subscribe(channelName: "room", option: everything))
            expectOK(await client.subscribe(channelName: "hall", option: nil))
        }
        expectError(.channelInstanceExceedLimitation, await tight.subscribe(channelName: "third", option: nil))
        expectOK(await roomy.subscribe(channelName: "third", option: nil))
        let two = ["seat": "7", "team": "red"]
        expectError(.presenceStateCountOverflow, await try #require(tight.getPresence()).setState(channelName: "room", channelType: .message, items: two))
        expectOK(await try #require(roomy.getPresence()).setState(channelName: "room", channelType: .message, items: two))
        let tightLock = try #require(tight.getLock()), roomyLock = try #require(roomy.getLock())
        for lock in [tightLock, roomyLock] { expectOK(await lock.setLock(channelName: "room", channelType: .message, lockName: "L1", ttl: 30)) }
        expectError(.lockOperationFailed, await tightLock.setLock(channelName: "room", channelType: .message, lockName: "L2", ttl: 30))
        expectOK(await roomyLock.setLock(channelName: "room", channelType: .message, lockName: "L2", ttl: 30))
        for client in [tight, tightBob, roomy, roomyBob] { client.destroy() }
        await server.shutdown()
    }

    @Test func aNewEditionReachesTheRequestsAfterItAndLeavesWhatWasDoneBefore() async throws {
        let server = try await Self.start()
        let tight = try Self.client("tight", "alice", server)
        expectOK(await tight.login(""))
        expectOK(await tight.subscribe(channelName: "one", option: nil))
        expectOK(await tight.subscribe(channelName: "two", option: nil))
        let medium = Data(count: 150)
        expectError(.channelMessageLengthExceedLimitation, await tight.publish(channelName: "one", data: medium, option: nil))

        // tight: larger payloads, one channel, two users; the app `fresh` is served, `roomy` no longer.
        var looser = Self.tight
        looser.messages.payloadMaxBytes = 200
        looser.messages.subscribedChannelsPerClient = 1
        looser.sessions.concurrentUsers = 2
        server.limitsBook.replace(with: LimitsBook.Edition(server: .withoutRateLimits, apps: ["tight": looser], served: ["tight", "fresh"]))

        expectOK(await tight.publish(channelName: "one", data: medium, option: nil))
        // The two channels subscribed before stay; a third is refused at the new cap.
        expectError(.channelInstanceExceedLimitation, await tight.subscribe(channelName: "three", option: nil))
        expectOK(await tight.unsubscribe("two"))
        expectError(.channelInstanceExceedLimitation, await tight.subscribe(channelName: "two", option: nil))
        let tightBob = try Self.client("tight", "bob", server)
        expectOK(await tightBob.login(""))
        let fresh = try Self.client("fresh", "alice", server), roomy = try Self.client("roomy", "alice", server)
        expectOK(await fresh.login(""))
        expectError(.invalidAppId, await roomy.login(""))
        for client in [tight, tightBob, fresh, roomy] { client.destroy() }
        await server.shutdown()
    }
}
