import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Two apps on one server, with the same user ids and channel names: nothing crosses between them,
/// in either direction.
@Suite(.timeLimit(.minutes(5))) struct AppIsolationTests {
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
        // Each app's own message last: anything crossing over would have come before it.
        let fenceA = await fence("room", from: aliceA, to: [aliceALog, bobALog])
        let fenceB = await fence("room", from: bobB, to: [aliceBLog, bobBLog])
        #expect(bobALog.messages.compactMap(\.message.stringData) == ["A room", "A direct", fenceA])
        #expect(aliceALog.messages.compactMap(\.message.stringData) == ["A room", fenceA])
        #expect(aliceBLog.messages.compactMap(\.message.stringData) == ["B room", "B direct", fenceB])
        #expect(bobBLog.messages.compactMap(\.message.stringData) == ["B room", fenceB])

        // A user of one app is offline in the other.
        let (carolA, _) = try client("carol", "appA")
        expectOK(await carolA.login(""))
        let toCarol = RtmPublishOptions()
        toCarol.channelType = .user
        expectError(.channelReceiverOffline, await bobB.publish(channelName: "carol", message: "?", option: toCarol))
        for member in [aliceA, bobA, aliceB, bobB, carolA] { member.destroy() }
        await server.shutdown()
    }

    @Test func presenceMetadataAndLocksStayInTheirApp() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits, configure: { $0.appIds = ["appA", "appB"] })
        let (aliceA, _) = try makeClient("alice", server: server) { $0.appId = "appA" }
        let (aliceB, _) = try makeClient("alice", server: server) { $0.appId = "appB" }
        let (bobB, bobBLog) = try makeClient("bob", server: server) { $0.appId = "appB" }
        for member in [aliceA, aliceB, bobB] { expectOK(await member.login("")) }
        let everything = RtmSubscribeOptions()
        everything.features = [.message, .presence, .metadata, .lock]
        expectOK(await bobB.subscribe(channelName: "room", option: everything))
        #expect(await bobBLog.wait { $0.storageEvents.count == 1 && $0.lockEvents.count == 1 })
        for member in [aliceA, aliceB] { expectOK(await member.subscribe(channelName: "room", option: everything)) }
        expectOK(await aliceA.subscribe(channelName: "lobby", option: everything))
        #expect(await bobBLog.wait { log in log.presence.contains { $0.type == .remoteJoinChannel && $0.publisher == "alice" } })

        // appA's alice sets a state, metadata and a lock on its own "room".
        let presenceA = try #require(aliceA.getPresence()), storageA = try #require(aliceA.getStorage())
        let lockA = try #require(aliceA.getLock())
        expectOK(await presenceA.setState(channelName: "room", channelType: .message, items: ["app": "A"]))
        let dataA = RtmMetadata()
        dataA.items = [RtmMetadataItem(key: "owner", value: "A", revision: -1)]
        expectOK(await storageA.setChannelMetadata(channelName: "room", channelType: .message, data: dataA, options: nil, lock: nil))
        expectOK(await lockA.setLock(channelName: "room", channelType: .message, lockName: "L", ttl: 30))
        let (heldA, heldAError) = await lockA.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: false)
        #expect(heldAError == nil && heldA != nil)

        // appB's "room" has none of it: its own lock of the same name is free, its metadata its own.
        let lockB = try #require(aliceB.getLock())
        expectOK(await lockB.setLock(channelName: "room", channelType: .message, lockName: "L", ttl: 30))
        let (heldB, heldError) = await lockB.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: false)
        #expect(heldError == nil && heldB != nil)
        let (locksB, _) = await try #require(bobB.getLock()).getLocks(channelName: "room", channelType: .message)
        #expect(locksB?.lockDetailList.map { "\($0.lockName)@\($0.owner)" } == ["L@alice"])
        let storageB = try #require(aliceB.getStorage())
        let dataB = RtmMetadata()
        dataB.items = [RtmMetadataItem(key: "owner", value: "B", revision: -1)]
        expectOK(await storageB.setChannelMetadata(channelName: "room", channelType: .message, data: dataB, options: nil, lock: nil))
        let (readB, _) = await storageB.getChannelMetadata(channelName: "room", channelType: .message)
        #expect(readB?.data?.items?.map { "\($0.key)=\($0.value)" } == ["owner=B"])
        let (usersB, _) = await try #require(bobB.getPresence()).whoNow(channelName: "room", channelType: .message, options: nil)
        #expect(usersB?.userStateList.sorted { $0.userId < $1.userId }
            == [RtmUserState(userId: "alice", states: [:]), RtmUserState(userId: "bob", states: [:])])
        let (whereA, _) = await try #require(bobB.getPresence()).getUserChannels(userId: "alice")
        #expect(whereA?.channels.map(\.channelName) == ["room"])

        // And bob of appB heard nothing of appA: no state, no metadata update, no lock event.
        await fence("room", from: aliceB, to: [bobBLog])
        #expect(!bobBLog.presence.contains { $0.states["app"] != nil })
        #expect(bobBLog.storageEvents.map(\.eventType) == [.snapshot, .update])
        #expect(bobBLog.storageEvents.last?.data.items?.map(\.value) == ["B"])
        #expect(bobBLog.lockEvents.map(\.eventType) == [.snapshot, .lockSet, .lockAcquired])
        for member in [aliceA, aliceB, bobB] { member.destroy() }
        await server.shutdown()
    }
}
