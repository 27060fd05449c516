import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// Presence end to end: a real server on 127.0.0.1 and raw protocol clients.
@Suite(.timeLimit(.minutes(5))) struct PresenceTests {
    let room = ChannelAddress(.message, "room")

    /// Publishes a message in "room" from `sender` and waits until each of `members` has it. A
    /// connection's pushes arrive in order, so any presence event on its way to them before the
    /// message has come: the positive control of a check that nothing more arrived.
    func fence(from sender: PresencePeer, to members: [PresencePeer]) async throws {
        let text = MessagePayload.string("fence \(UInt64.random(in: 0...UInt64.max))")
        try await sender.expectOK { .publish(id: $0, channelType: .message, channel: "room", message: text) }
        for member in members {
            let arrived = await eventually {
                member.client.received.contains { if case .push(.message(let message)) = $0 { message.payload == text } else { false } }
            }
            #expect(arrived, "\(member.userId) did not get the fence")
        }
    }

    @Test func everyEventAndQueryOverTheWire() async throws {
        var limits = Limits()
        limits.presence.whoNowPageSize = 2
        let scene = try await PresenceScene.start(limits: limits)
        let alice = try await scene.login("alice")
        let bob = try await scene.login("bob")
        let carol = try await scene.login("carol")

        try await alice.subscribe("room")
        #expect(await alice.waitFor(.snapshot).first?.snapshot == [UserState(userId: "alice")])
        try await bob.subscribe("room")
        let snapshot = try #require(await bob.waitFor(.snapshot).first)
        #expect(snapshot.snapshot.map(\.userId) == ["alice", "bob"] && snapshot.channelName == "room" && snapshot.channelType == .message)
        let join = try #require(await alice.waitFor(.remoteJoinChannel).first)
        #expect(join.publisher == "bob" && join.firstOrLast && join.timestamp > 0)

        try await bob.setState("room", ["mood": "happy"])
        #expect(await alice.waitFor(.remoteStateChanged).first?.states == ["mood": "happy"])
        try await carol.subscribe("room", [.message])

        let state = try await carol.expectOK { .getState(id: $0, channel: room, userId: "bob") }
        #expect(state == .presence(.getState(UserState(userId: "bob", states: ["mood": "happy"]))))
        let first = try await carol.whoNow("room", includeState: true)
        #expect(first.users == [UserState(userId: "alice"), UserState(userId: "bob", states: ["mood": "happy"])])
        #expect(first.totalOccupancy == 2 && !first.nextPage.isEmpty)
        let second = try await carol.whoNow("room", includeState: true, page: first.nextPage)
        #expect(second.users == [UserState(userId: "carol")] && second.nextPage.isEmpty)
        #expect(try await carol.whoNow("room", includeUserId: false) == WhoNowPage(totalOccupancy: 3, users: [], nextPage: ""))
        #expect(try await carol.expectOK { .whereNow(id: $0, userId: "bob") } == .presence(.whereNow([room])))
        guard case .presence(.getUserPresence(let users)) = try await carol.expectOK({ .getUserPresence(id: $0, userIds: ["alice", "nobody"]) })
        else { throw PresencePeerError.refused("getUserPresence") }
        #expect(users.map(\.userId) == ["alice", "nobody"] && users.map(\.online) == [true, false])
        #expect(users[0].lastSeen > 0 && users[1].lastSeen == 0)

        try await bob.expectOK { .removeState(id: $0, channel: room, keys: []) }
        #expect(await alice.waitFor(.remoteStateChanged, count: 2).last?.states == [:])
        try await bob.expectOK { .unsubscribe(id: $0, channel: "room") }
        let leave = try #require(await alice.waitFor(.remoteLeaveChannel).first)
        #expect(leave.publisher == "bob" && leave.firstOrLast)
        try await fence(from: alice, to: [alice, carol])
        #expect(carol.events.isEmpty, "carol did not ask for presence")
        #expect(alice.events.map(\.type) == [.snapshot, .remoteJoinChannel, .remoteStateChanged, .remoteJoinChannel, .remoteStateChanged, .remoteLeaveChannel])
        #expect(alice.events.map(\.publisher) == ["alice", "bob", "bob", "carol", "bob", "bob"], "carol is present without listening")

        await scene.end()
    }

    @Test func badRequestsGetTheReferenceCodesAndChangeNothing() async throws {
        let scene = try await PresenceScene.start()
        let alice = try await scene.login("alice")
        let observer = try await scene.login("observer")
        try await observer.subscribe("room")
        let item = [StateItem(key: "k", value: "v")]
        #expect(await alice.errorCode { .setState(id: $0, channel: room, items: item) } == .channelNotSubscribed)
        #expect(await alice.errorCode { .setState(id: $0, channel: ChannelAddress(.stream, "room"), items: item) } == .channelNotJoined)
        #expect(await alice.errorCode { .setState(id: $0, channel: ChannelAddress(.user, "bob"), items: item) } == .invalidChannelType)
        try await alice.subscribe("room")
        #expect(await alice.errorCode { .setState(id: $0, channel: room, items: [StateItem(key: String(repeating: "k", count: 33), value: "")]) }
            == .presenceStateKeySizeOverflow)
        #expect(await alice.errorCode { .setState(id: $0, channel: room, items: [StateItem(key: "a", value: "1"), StateItem(key: "a", value: "2")]) }
            == .presenceStateDuplicateKey)
        #expect(await alice.errorCode { .setState(id: $0, channel: room, items: (0..<33).map { StateItem(key: "k\($0)", value: "") }) }
            == .presenceStateCountOverflow)
        #expect(await alice.errorCode { .setState(id: $0, channel: room, items: [StateItem(key: "v", value: String(repeating: "x", count: 8 * 1024 + 1))]) }
            == .presenceStateValueSizeOverflow)
        #expect(await alice.errorCode { .setState(id: $0, channel: room, items: []) } == .presenceInvalidArgument)
        #expect(await alice.errorCode { .whoNow(id: $0, channel: room, page: "garbage") } == .presenceInvalidArgument)
        #expect(await alice.errorCode { .getState(id: $0, channel: room, userId: "nobody") } == .presenceUserNotExist)
        #expect(await alice.errorCode { .whereNow(id: $0, userId: String(repeating: "u", count: 65)) } == .invalidUserId)
        #expect(await alice.errorCode { .removeState(id: $0, channel: ChannelAddress(.message, ""), keys: []) } == .invalidChannelName)
        let error = await alice.call { .getState(id: $0, channel: room, userId: "nobody") }
        if case .error(_, let refusal)? = error { #expect(refusal.operation == "getState" && !refusal.reason.isEmpty) }
        try await fence(from: alice, to: [observer])
        #expect(observer.events.map(\.type) == [.snapshot, .remoteJoinChannel], "no refused change was announced")
        await scene.end()
    }

    @Test func aQuietMemberHearsButIsNotShown() async throws {
        let scene = try await PresenceScene.start()
        let alice = try await scene.login("alice")
        let bob = try await scene.login("bob")
        let carol = try await scene.login("carol")
        try await alice.subscribe("room")
        try await bob.subscribe("room", [.message, .presence, .beQuiet])
        try await bob.setState("room", ["hidden": "yes"])
        #expect(await bob.waitFor(.snapshot).first?.snapshot.map(\.userId) == ["alice"])
        try await carol.subscribe("room")
        #expect(await bob.waitFor(.remoteJoinChannel).first?.publisher == "carol")
        #expect(try await alice.whoNow("room").users.map(\.userId) == ["alice", "carol"])
        #expect(try await alice.expectOK { .whereNow(id: $0, userId: "bob") } == .presence(.whereNow([])))
        #expect(await alice.errorCode { .getState(id: $0, channel: room, userId: "bob") } == .presenceUserNotExist)
        try await bob.expectOK { .unsubscribe(id: $0, channel: "room") }
        try await fence(from: carol, to: [alice])
        #expect(alice.events.map(\.publisher) == ["alice", "carol"], "alice saw her snapshot and carol's join only")
        await scene.end()
    }

    @Test func aResumeShowsNothingAndAnExpiredGraceShowsOneTimeoutThenTheRejoin() async throws {
        let clock = ManualClock()
        let scene = try await PresenceScene.start(clock: clock)
        let recorder = EventRecorder()
        recorder.record(SessionSuspended.self, on: scene.server.bus)
        let alice = try await scene.login("alice")
        try await alice.subscribe("room")
        let bob = try await scene.login("bob", presenceTimeout: 5)
        try await bob.subscribe("room")
        try await bob.setState("room", ["k": "v"])
        await alice.waitFor(.remoteStateChanged)

        bob.close()
        await recorder.waitFor(SessionSuspended.self)
        clock.advance(by: .seconds(4))
        let resumed = try await scene.login("bob", presenceTimeout: 5, resume: bob.accepted.ticket)
        #expect(resumed.accepted.resumed)
        #expect(try await alice.expectOK { .getState(id: $0, channel: room, userId: "bob") }
            == .presence(.getState(UserState(userId: "bob", states: ["k": "v"]))), "the state survives a resume")

        resumed.close()
        await recorder.waitFor(SessionSuspended.self, count: 2)
        clock.advance(by: .seconds(5))
        let timeout = try #require(await alice.waitFor(.remoteConnectionTimeout).first)
        #expect(timeout.publisher == "bob" && timeout.states.isEmpty && timeout.firstOrLast)
        #expect(await alice.errorCode { .getState(id: $0, channel: room, userId: "bob") } == .presenceUserNotExist)

        let again = try await scene.login("bob", presenceTimeout: 5, resume: bob.accepted.ticket)
        #expect(!again.accepted.resumed, "too late: a new session")
        try await again.subscribe("room")
        try await again.setState("room", ["k": "v"])
        await alice.waitFor(.remoteStateChanged, count: 2)
        #expect(alice.events.map(\.type) == [
            .snapshot, .remoteJoinChannel, .remoteStateChanged, .remoteConnectionTimeout, .remoteJoinChannel, .remoteStateChanged,
        ])
        await scene.end()
    }

    @Test func aCrowdedChannelSendsIntervalEventsAndReturnsToRealTime() async throws {
        let clock = ManualClock()
        var limits = Limits()
        limits.presence.intervalThreshold = 8
        limits.presence.interval = .seconds(5)
        let scene = try await PresenceScene.start(clock: clock, limits: limits)
        let alice = try await scene.login("alice")
        try await alice.subscribe("room")
        var crowd: [PresencePeer] = []
        for index in 0..<9 {
            let member = try await scene.login("user\(index)")
            try await member.subscribe("room", [.message])
            crowd.append(member)
        }
        _ = try await alice.whoNow("room")  // every join is applied
        #expect(alice.events.filter { $0.type == .remoteJoinChannel }.count == 7)
        clock.advance(by: .seconds(5))
        let interval = try #require(await alice.waitFor(.interval).first)
        #expect(interval.interval == PresenceIntervalInfo(joinUserList: ["user7", "user8"], totalOccupancy: 10))
        #expect(interval.publisher.isEmpty && interval.channelName == "room")

        try await crowd[8].expectOK { .unsubscribe(id: $0, channel: "room") }
        try await crowd[7].expectOK { .unsubscribe(id: $0, channel: "room") }
        _ = try await alice.whoNow("room")
        clock.advance(by: .seconds(2))
        let last = await alice.waitFor(.interval, count: 2)
        #expect(last.last?.interval == PresenceIntervalInfo(leaveUserList: ["user8", "user7"], totalOccupancy: 8))
        try await crowd[6].expectOK { .unsubscribe(id: $0, channel: "room") }
        #expect(await alice.waitFor(.remoteLeaveChannel).first?.publisher == "user6", "real-time again")
        await scene.end()
    }

    @Test func twoAppsWithTheSameUsersAndChannelsNeverMeet() async throws {
        let scene = try await PresenceScene.start()
        let aliceA = try await scene.login("alice", appId: "app-a")
        let aliceB = try await scene.login("alice", appId: "app-b")
        let bobA = try await scene.login("bob", appId: "app-a")
        let bobB = try await scene.login("bob", appId: "app-b")
        try await aliceA.subscribe("room")
        try await aliceB.subscribe("room")
        try await bobA.subscribe("room")
        try await bobA.setState("room", ["app": "a"])
        try await bobB.subscribe("room", [.message])
        try await bobB.setState("room", ["app": "b"])
        #expect(await aliceA.waitFor(.remoteStateChanged).first?.states == ["app": "a"])
        #expect(await aliceB.waitFor(.remoteStateChanged).first?.states == ["app": "b"])
        #expect(try await aliceA.whoNow("room", includeState: true).users
            == [UserState(userId: "alice"), UserState(userId: "bob", states: ["app": "a"])])
        #expect(try await aliceB.whoNow("room", includeState: true).users
            == [UserState(userId: "alice"), UserState(userId: "bob", states: ["app": "b"])])
        try await bobA.expectOK { .unsubscribe(id: $0, channel: "room") }
        await aliceA.waitFor(.remoteLeaveChannel)
        #expect(try await aliceB.expectOK { .whereNow(id: $0, userId: "bob") } == .presence(.whereNow([room])))
        #expect(try await aliceA.expectOK { .whereNow(id: $0, userId: "bob") } == .presence(.whereNow([])))
        try await fence(from: aliceA, to: [aliceA])
        try await fence(from: aliceB, to: [aliceB])
        #expect(aliceA.events.map(\.type) == [.snapshot, .remoteJoinChannel, .remoteStateChanged, .remoteLeaveChannel])
        #expect(aliceB.events.map(\.type) == [.snapshot, .remoteJoinChannel, .remoteStateChanged])
        await scene.end()
    }
}
