import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

extension EventLog {
    var presence: [RtmPresenceEvent] {
        all.compactMap { if case .presence(let event) = $0 { event } else { nil } }
    }

    func presence(_ type: RtmPresenceEventType) -> [RtmPresenceEvent] { presence.filter { $0.type == type } }

    /// Waits until `count` presence events of `type` arrived.
    @discardableResult
    func waitForPresence(_ type: RtmPresenceEventType, count: Int = 1) async -> Bool {
        await wait { $0.presence(type).count >= count }
    }
}

/// Records the presence events a delegate gets.
private final class PresenceDelegate: RtmClientDelegate, Sendable {
    let events = Mutex<[RtmPresenceEvent]>([])
    func rtmKit(_ rtmKit: RtmClientKit, didReceivePresenceEvent event: RtmPresenceEvent) {
        events.withLock { $0.append(event) }
    }
}

/// The SDK's presence end to end, against a real server.
@Suite(.timeLimit(.minutes(5))) struct PresenceTests {
    @Test func eventsReachTheDelegateAndTheStreamWithTheReferenceFields() async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, _) = try makeClient("bob", server: server)
        let delegate = PresenceDelegate()
        alice.addDelegate(delegate)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        let presence = try #require(bob.getPresence())
        expectOK(await presence.setState(channelName: "room", channelType: .message, items: ["mood": "happy"]))
        expectOK(await presence.removeState(channelName: "room", channelType: .message, keys: []))
        expectOK(await bob.unsubscribe("room"))
        #expect(await aliceLog.waitForPresence(.remoteLeaveChannel))

        let events = aliceLog.presence
        #expect(events.map(\.type) == [.snapshot, .remoteJoinChannel, .remoteStateChanged, .remoteStateChanged, .remoteLeaveChannel])
        #expect(events[0].snapshot == [RtmUserState(userId: "alice", states: [:])] && events[0].interval.totalOccupancy == 1)
        #expect(events[1].publisher == "bob" && events[1].isFirstConnection && !events[1].isLastConnection)
        #expect(events.dropFirst().allSatisfy { $0.channelName == "room" && $0.channelType == .message && $0.timestamp > 0 })
        #expect(events[2].states == ["mood": "happy"] && events[3].states.isEmpty)
        #expect(events[4].isLastConnection && events[4].states.isEmpty)
        #expect(events[2].interval.joinUserList.isEmpty && events[2].snapshot.isEmpty)
        #expect(await eventually { delegate.events.withLock { $0.count } >= events.count })
        #expect(delegate.events.withLock { $0.map(\.type) } == events.map(\.type), "the delegate hears the same, in order")
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func everyQueryInBothNamesAndBothForms() async throws {
        var limits = Limits()
        limits.presence.whoNowPageSize = 2
        let server = try await TestServer.start(limits: limits)
        let clients = try ["alice", "bob", "carol"].map { try makeClient($0, server: server).0 }
        for client in clients {
            expectOK(await client.login(""))
            expectOK(await client.subscribe(channelName: "room", option: nil))
        }
        let presence = try #require(clients[0].getPresence())
        expectOK(await try #require(clients[1].getPresence()).setState(channelName: "room", channelType: .message, items: ["seat": "2"]))

        let options = RtmGetOnlineUsersOptions()
        options.includeState = true
        let (first, firstError) = await presence.getOnlineUsers(channelName: "room", channelType: .message, options: options)
        #expect(firstError == nil)
        #expect(first?.userStateList == [RtmUserState(userId: "alice", states: [:]), RtmUserState(userId: "bob", states: ["seat": "2"])])
        #expect(first?.totalOccupancy == 2)
        options.page = try #require(first?.nextPage)
        let (second, _) = await presence.getOnlineUsers(channelName: "room", channelType: .message, options: options)
        #expect(second?.userStateList.map(\.userId) == ["carol"] && second?.nextPage == nil)

        let count = RtmPresenceOptions()
        count.includeUserId = false
        let (total, _) = await presence.whoNow(channelName: "room", channelType: .message, options: count)
        #expect(total?.totalOccupancy == 3 && total?.userStateList.isEmpty == true)
        let paged: RtmWhoNowResponse? = await withCheckedContinuation { continuation in
            presence.whoNow(channelName: "room", channelType: .message, options: nil) { response, _ in continuation.resume(returning: response) }
        }
        #expect(paged?.userStateList.map(\.userId) == ["alice", "bob"] && paged?.nextPage != nil)

        let (channels, _) = await presence.getUserChannels(userId: "bob")
        #expect(channels?.totalChannel == 1 && channels?.channels.first?.channelName == "room")
        #expect(channels?.channels.first?.channelType == .message)
        let (where_, _) = await presence.whereNow(userId: "nobody")
        #expect(where_?.totalChannel == 0 && where_?.channels.isEmpty == true)
        let (state, _) = await presence.getState(channelName: "room", channelType: .message, userId: "bob")
        #expect(state?.state == RtmUserState(userId: "bob", states: ["seat": "2"]))
        let viaBlock: RtmPresenceGetStateResponse? = await withCheckedContinuation { continuation in
            presence.getState(channelName: "room", channelType: .message, userId: "bob") { response, _ in continuation.resume(returning: response) }
        }
        #expect(viaBlock?.state.states == ["seat": "2"])
        let (online, _) = await presence.getUserPresence(userIds: ["carol", "nobody"])
        #expect(online?.users.map(\.isOnline) == [true, false] && (online?.users.first?.lastSeen ?? 0) > 0)

        let (_, absent) = await presence.getState(channelName: "room", channelType: .message, userId: "nobody")
        #expect(absent?.errorCode == .presenceUserNotExist && absent?.operation == "getState")
        let (_, userChannel) = await presence.whoNow(channelName: "bob", channelType: .user, options: nil)
        #expect(userChannel?.errorCode == .invalidChannelType)
        for client in clients { client.destroy() }
        await server.shutdown()
    }

    @Test func quietModeHearsWithoutBeingShown() async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        let quiet = RtmSubscribeOptions()
        quiet.features = [.message, .presence, .beQuiet]
        expectOK(await bob.subscribe(channelName: "room", option: quiet))
        let bobPresence = try #require(bob.getPresence())
        expectOK(await bobPresence.setState(channelName: "room", channelType: .message, items: ["hidden": "1"]))
        #expect(await bobLog.waitForPresence(.snapshot))
        #expect(bobLog.presence(.snapshot).first?.snapshot.map(\.userId) == ["alice"])
        let (who, _) = try await #require(alice.getPresence()).whoNow(channelName: "room", channelType: .message, options: nil)
        #expect(who?.userStateList.map(\.userId) == ["alice"])
        let (whereBob, _) = try await #require(alice.getPresence()).getUserChannels(userId: "bob")
        #expect(whereBob?.totalChannel == 0)
        let (mine, _) = await bobPresence.getState(channelName: "room", channelType: .message, userId: "bob")
        #expect(mine?.state.states == ["hidden": "1"], "a quiet member reads its own state")
        await fence("room", from: bob, to: [aliceLog])
        #expect(aliceLog.presence.map(\.type) == [.snapshot], "alice heard nothing of bob")
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aStateSetBeforeJoiningIsAppliedOnJoinAndLimitsAreTheReferences() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, _) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        let presence = try #require(bob.getPresence())
        expectOK(await presence.setState(channelName: "room", channelType: .message, items: ["seat": "7", "team": "red"]))
        expectOK(await presence.removeState(channelName: "room", channelType: .message, keys: ["team"]))
        expectError(.presenceStateKeySizeOverflow, await presence.setState(
            channelName: "room", channelType: .message, items: [String(repeating: "k", count: 33): "v"]))
        for index in 0..<3 {
            let items = Dictionary(uniqueKeysWithValues: (0..<32).map { ("k\($0)", "v") })
            expectOK(await presence.setState(channelName: "later-\(index)", channelType: .message, items: items))
        }
        expectError(.presenceCacheTooManyStates, await presence.setState(
            channelName: "later-3", channelType: .message, items: (0..<4).reduce(into: [:]) { $0["k\($1)"] = "v" }))
        expectOK(await presence.removeState(channelName: "later-2", channelType: .message, keys: []))
        expectOK(await presence.setState(channelName: "later-3", channelType: .message, items: ["k": "v"]))
        expectError(.presenceStateCountOverflow, await presence.setState(
            channelName: "later-4", channelType: .message, items: (0..<33).reduce(into: [:]) { $0["k\($1)"] = "v" }))

        expectOK(await bob.subscribe(channelName: "room", option: nil))
        #expect(await aliceLog.waitForPresence(.remoteStateChanged))
        #expect(aliceLog.presence.map(\.type) == [.snapshot, .remoteJoinChannel, .remoteStateChanged])
        #expect(aliceLog.presence(.remoteStateChanged).first?.states == ["seat": "7"])
        let (state, _) = await presence.getState(channelName: "room", channelType: .message, userId: "bob")
        #expect(state?.state.states == ["seat": "7"], "applied before subscribe answered")
        expectError(.presenceStateKeySizeOverflow, await presence.setState(
            channelName: "room", channelType: .message, items: [String(repeating: "k", count: 33): "v"]))
        expectError(.presenceStateValueSizeOverflow, await presence.setState(
            channelName: "room", channelType: .message, items: ["v": String(repeating: "x", count: 8 * 1024 + 1)]))
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func statesInAStreamChannelReachTheServerAndOnesSetBeforeJoiningAreSentOnJoin() async throws {
        // Seed 000: presence applies to message channels and stream channels alike.
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, _) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        let aliceLive = try alice.createStreamChannel("live")
        expectOK(await aliceLive.join(RtmJoinChannelOption()))
        let presence = try #require(bob.getPresence())
        // Before bob joins, his state is kept, and sent once he has.
        expectOK(await presence.setState(channelName: "live", channelType: .stream, items: ["seat": "7", "team": "red"]))
        expectOK(await presence.removeState(channelName: "live", channelType: .stream, keys: ["team"]))
        let bobLive = try bob.createStreamChannel("live")
        expectOK(await bobLive.join(RtmJoinChannelOption()))
        let (kept, keptError) = await presence.getState(channelName: "live", channelType: .stream, userId: "bob")
        #expect(keptError == nil && kept?.state.states == ["seat": "7"], "sent before the join was answered")
        #expect(await aliceLog.waitForPresence(.remoteStateChanged))
        #expect(aliceLog.presence(.remoteStateChanged).first?.states == ["seat": "7"])
        #expect(aliceLog.presence(.remoteStateChanged).first?.channelType == .stream)
        // In the joined channel, a change goes to the server at once.
        expectOK(await presence.setState(channelName: "live", channelType: .stream, items: ["mood": "calm"]))
        #expect(await aliceLog.waitForPresence(.remoteStateChanged, count: 2))
        #expect(aliceLog.presence(.remoteStateChanged).last?.states == ["seat": "7", "mood": "calm"])
        expectOK(await presence.removeState(channelName: "live", channelType: .stream, keys: ["seat"]))
        #expect(await aliceLog.waitForPresence(.remoteStateChanged, count: 3))
        #expect(aliceLog.presence(.remoteStateChanged).last?.states == ["mood": "calm"])
        let (seen, _) = try await #require(alice.getPresence()).getState(channelName: "live", channelType: .stream, userId: "bob")
        #expect(seen?.state.states == ["mood": "calm"])
        // The server checks them: an oversized key is refused with the reference's code.
        expectError(.presenceStateKeySizeOverflow, await presence.setState(
            channelName: "live", channelType: .stream, items: [String(repeating: "k", count: 33): "v"]))
        // Leaving forgets them: joining again sends nothing old.
        expectOK(await bobLive.leave())
        expectOK(await bobLive.join(RtmJoinChannelOption()))
        let (after, _) = await presence.getState(channelName: "live", channelType: .stream, userId: "bob")
        #expect(after?.state.states.isEmpty == true)
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aResumeShowsNothingAndAReconnectAfterTheGraceShowsTheJoinThenTheState() async throws {
        let serverClock = ManualClock()
        let server = try await TestServer.start(clock: serverClock, configure: { $0.loginTimeout = nil })
        let recorder = EventRecorder()
        recorder.record(SessionSuspended.self, on: server.bus)
        let bobClock = ManualClock()
        let (alice, aliceLog) = try makeClient("alice", server: server) { $0.heartbeatInterval = 1800 }
        let (bob, bobLog) = try makeClient("bob", server: server, clock: bobClock) { $0.presenceTimeout = 5 }
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        expectOK(await try #require(bob.getPresence()).setState(channelName: "room", channelType: .message, items: ["seat": "7"]))
        #expect(await aliceLog.waitForPresence(.remoteStateChanged))

        // A lost connection, resumed at once: nobody sees anything.
        await bob.loseConnectionSilently()
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        for _ in 0..<20 where bobLog.linkStates.last?.currentState != .connected {
            #expect(await bobClock.waitForSleepers())
            bobClock.advance(by: .milliseconds(100))
            try? await Task.sleep(for: .milliseconds(5))
        }
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected && $0.linkStates.last?.isResumed == true })

        // Lost again, and the server's grace ends before the client is back.
        await bob.loseConnectionSilently()
        serverClock.advance(by: .seconds(16))  // no heartbeat for 5 + 10 s: suspended
        #expect(await recorder.waitFor(SessionSuspended.self).count == 1)
        serverClock.advance(by: .seconds(5))  // the presence timeout
        #expect(await aliceLog.waitForPresence(.remoteConnectionTimeout))
        let timeout = try #require(aliceLog.presence(.remoteConnectionTimeout).first)
        #expect(timeout.publisher == "bob" && timeout.states.isEmpty && timeout.isLastConnection)

        for _ in 0..<40 where aliceLog.presence(.remoteStateChanged).count < 2 {
            #expect(await bobClock.waitForSleepers())
            bobClock.advance(by: .seconds(1))
            try? await Task.sleep(for: .milliseconds(10))
        }
        #expect(await aliceLog.waitForPresence(.remoteStateChanged, count: 2))
        #expect(aliceLog.presence.map(\.type) == [
            .snapshot, .remoteJoinChannel, .remoteStateChanged, .remoteConnectionTimeout, .remoteJoinChannel, .remoteStateChanged,
        ])
        #expect(aliceLog.presence.last?.states == ["seat": "7"], "the SDK set its state again")
        // Alice may hear the state before Bob's client has reported its link back.
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected })
        let back = try #require(bobLog.linkStates.last)
        #expect(back.currentState == .connected && !back.isResumed && back.unrestoredChannels.isEmpty)
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aCrowdedChannelSendsIntervalEvents() async throws {
        let clock = ManualClock()
        var limits = Limits()
        limits.presence.intervalThreshold = 8
        limits.presence.interval = .seconds(5)
        let server = try await TestServer.start(clock: clock, limits: limits, configure: { $0.loginTimeout = nil })
        let (alice, aliceLog) = try makeClient("alice", server: server) { $0.heartbeatInterval = 1800 }
        expectOK(await alice.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        var crowd: [RtmClientKit] = []
        for index in 0..<9 {
            let (member, _) = try makeClient("user\(index)", server: server) { $0.heartbeatInterval = 1800 }
            expectOK(await member.login(""))
            let options = RtmSubscribeOptions()
            options.features = [.message]
            expectOK(await member.subscribe(channelName: "room", option: options))
            crowd.append(member)
        }
        _ = try await #require(alice.getPresence()).whoNow(channelName: "room", channelType: .message, options: nil)
        clock.advance(by: .seconds(5))
        #expect(await aliceLog.waitForPresence(.interval))
        let interval = try #require(aliceLog.presence(.interval).first)
        #expect(interval.interval.joinUserList == ["user7", "user8"] && interval.interval.totalOccupancy == 10)
        #expect(interval.publisher.isEmpty && aliceLog.presence(.remoteJoinChannel).count == 7)
        for client in crowd + [alice] { client.destroy() }
        await server.shutdown()
    }

    @Test(arguments: [RtmEncryptionMode.AES128GCM, .AES256GCM])
    func stateValuesAreSealedLikeMessages(mode: RtmEncryptionMode) async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server, configure: encrypted(mode))
        let (bob, _) = try makeClient("bob", server: server, configure: encrypted(mode))
        let (eve, eveLog) = try makeClient("eve", server: server)
        for client in [alice, bob, eve] {
            expectOK(await client.login(""))
            expectOK(await client.subscribe(channelName: "vault", option: nil))
        }
        expectOK(await try #require(bob.getPresence()).setState(channelName: "vault", channelType: .message, items: ["code": "1234 ✓"]))
        #expect(await aliceLog.waitForPresence(.remoteStateChanged))
        #expect(aliceLog.presence(.remoteStateChanged).first?.states == ["code": "1234 ✓"])
        let (state, _) = try await #require(alice.getPresence()).getState(channelName: "vault", channelType: .message, userId: "bob")
        #expect(state?.state.states == ["code": "1234 ✓"])

        // The server holds base64 of a sealed string (kind 0x01), which opens under the key.
        let held = try await server.bus.request(
            GetPresenceState(caller: Caller(app: "test-app", userId: "eve", session: SessionID(0)), channel: ChannelAddress(.message, "vault"), userId: "bob"))
        let sealed = try #require(held.states["code"].flatMap { Data(base64Encoded: $0) })
        #expect(sealed.count == "1234 ✓".utf8.count + PayloadSealer.overhead)
        let key = try CryptoPrimitives.deriveKey(mode: mode, encryptionKey: "correct horse battery staple", salt: Array(testSalt))
        #expect(try CryptoPrimitives.openSealedPayload(mode: mode, key: key, sealed: Array(sealed)) == [0x01] + Array("1234 ✓".utf8))
        #expect(await eveLog.waitForPresence(.remoteStateChanged))
        #expect(eveLog.presence(.remoteStateChanged).first?.states["code"] == held.states["code"], "without the key: the sealed text")
        for client in [alice, bob, eve] { client.destroy() }
        await server.shutdown()
    }
}
