import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// Two apps on one server, with the same user ids and channel names: nothing crosses between them,
/// in either direction.
@Suite struct AppIsolationTests {
    @Test func twoAppsOnOneServerNeverMeet() async throws {
        let server = try await TestServer.start(configure: { $0.appIds = ["appA", "appB"] })
        func client(_ user: String, _ app: String) throws -> (RtmClientKit, EventLog) {
            try makeClient(user, server: server) { $0.appId = app }
        }
        let (aliceA, aliceALog) = try client("alice", "appA")
        let (bobA, bobALog) = try client("bob", "appA")
        let (aliceB, aliceBLog) = try client("alice", "appB")
        let (bobB, bobBLog) = try client("bob", "appB")
        for member in [aliceA, bobA, aliceB, bobB] { expectOK(await member.login("")) }
        for member in [aliceA, bobA, aliceB, bobB] { expectOK(await member.subscribe(channelName: "room", option: nil)) }

        // The same user id logging in to another app kicked nobody.
        for log in [aliceALog, bobALog, aliceBLog, bobBLog] {
            #expect(log.linkStates.allSatisfy { $0.currentState != .failed })
        }

        let direct = RtmPublishOptions()
        direct.channelType = .user
        expectOK(await aliceA.publish(channelName: "room", message: "A room", option: nil))
        expectOK(await aliceA.publish(channelName: "bob", message: "A direct", option: direct))
        expectOK(await bobB.publish(channelName: "room", message: "B room", option: nil))
        expectOK(await bobB.publish(channelName: "alice", message: "B direct", option: direct))

        #expect(await bobALog.wait { $0.messages.count >= 2 })
        #expect(await aliceBLog.wait { $0.messages.count >= 2 })
        #expect(await aliceALog.wait { $0.messages.count >= 1 })
        #expect(await bobBLog.wait { $0.messages.count >= 1 })
        try await Task.sleep(for: .milliseconds(50))  // time for anything crossing over to arrive
        #expect(bobALog.messages.compactMap(\.message.stringData) == ["A room", "A direct"])
        #expect(aliceALog.messages.compactMap(\.message.stringData) == ["A room"])
        #expect(aliceBLog.messages.compactMap(\.message.stringData) == ["B room", "B direct"])
        #expect(bobBLog.messages.compactMap(\.message.stringData) == ["B room"])

        // A user of one app is offline in the other.
        let (carolA, _) = try client("carol", "appA")
        expectOK(await carolA.login(""))
        let toCarol = RtmPublishOptions()
        toCarol.channelType = .user
        expectError(.channelReceiverOffline, await bobB.publish(channelName: "carol", message: "?", option: toCarol))
        for member in [aliceA, bobA, aliceB, bobB, carolA] { member.destroy() }
        await server.shutdown()
    }
}
