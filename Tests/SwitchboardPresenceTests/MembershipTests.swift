import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct MembershipTests {
    let alice = PresenceWorld.caller("alice", 1)
    let bob = PresenceWorld.caller("bob", 2)
    let carol = PresenceWorld.caller("carol", 3)

    @Test(arguments: [false, true]) func theJoinerGetsASnapshotAndTheOthersAJoin(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        _ = try await world.request(SetPresenceState(caller: alice, channel: ChannelAddress(.message, "room"), items: [StateItem(key: "mood", value: "happy")]))
        await world.join(bob, "room")

        let snapshot = try #require(world.events(.snapshot, to: bob).first)
        #expect(snapshot.channelType == .message && snapshot.channelName == "room" && snapshot.publisher == "bob")
        #expect(snapshot.snapshot == [UserState(userId: "alice", states: ["mood": "happy"]), UserState(userId: "bob")])
        #expect(snapshot.totalOccupancy == 2 && !snapshot.more)
        #expect(snapshot.timestamp == world.harness.clock.wallMilliseconds)

        let join = try #require(world.events(.remoteJoinChannel, to: alice).first)
        #expect(join.publisher == "bob" && join.channelName == "room" && join.channelType == .message)
        #expect(join.states.isEmpty && join.firstOrLast)
        #expect(world.events(.remoteJoinChannel, to: bob).isEmpty, "nobody is told of their own join")
        await world.stop()
    }

    @Test(arguments: [false, true]) func leavesAndStateChangesReachTheOthersWithTheWholeState(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        for member in [alice, bob, carol] { await world.join(member, "room") }
        let room = ChannelAddress(.message, "room")
        _ = try await world.request(SetPresenceState(caller: bob, channel: room, items: [StateItem(key: "a", value: "1")]))
        _ = try await world.request(SetPresenceState(caller: bob, channel: room, items: [StateItem(key: "b", value: "2")]))
        _ = try await world.request(RemovePresenceState(caller: bob, channel: room, keys: ["a"]))
        await world.leave(bob, "room")

        for observer in [alice, carol] {
            let changes = world.events(.remoteStateChanged, to: observer)
            #expect(changes.map(\.states) == [["a": "1"], ["a": "1", "b": "2"], ["b": "2"]])
            #expect(changes.allSatisfy { $0.publisher == "bob" })
            let leave = try #require(world.events(.remoteLeaveChannel, to: observer).first)
            #expect(leave.publisher == "bob" && leave.states.isEmpty && leave.firstOrLast)
        }
        #expect(world.events(.remoteStateChanged, to: bob).isEmpty, "the changer is not told of its own change")
        await world.stop()
    }

    @Test(arguments: [false, true]) func onlyMembersThatAskedForPresenceHearIt(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room", [.message])
        await world.join(bob, "room")
        #expect(world.events(to: alice).isEmpty, "no presence feature: no snapshot, no events")
        #expect(world.events(.snapshot, to: bob).first?.snapshot.map(\.userId) == ["alice", "bob"], "but alice is present")
        await world.join(alice, "room", [.message, .presence])
        #expect(world.events(.snapshot, to: alice).count == 1, "asking for presence later brings a snapshot")
        #expect(world.events(.remoteJoinChannel, to: bob).isEmpty, "a feature change is no join")
        await world.stop()
    }

    @Test(arguments: [false, true]) func aQuietMemberHearsOthersAndIsNeitherShownNorFound(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room", [.message, .presence, .beQuiet])
        let room = ChannelAddress(.message, "room")
        _ = try await world.request(SetPresenceState(caller: bob, channel: room, items: [StateItem(key: "k", value: "v")]))
        await world.join(carol, "room")

        #expect(world.events(to: alice).map(\.type) == [.snapshot, .remoteJoinChannel])
        #expect(world.events(.remoteJoinChannel, to: alice).first?.publisher == "carol")
        #expect(world.events(.snapshot, to: bob).first?.snapshot.map(\.userId) == ["alice"], "the quiet joiner is not in its own snapshot")
        #expect(world.events(.remoteJoinChannel, to: bob).first?.publisher == "carol", "the quiet member hears others")
        #expect(world.events(.snapshot, to: carol).first?.snapshot.map(\.userId) == ["alice", "carol"])
        let who = try await world.request(WhoNow(caller: carol, channel: room))
        #expect(who.users.map(\.userId) == ["alice", "carol"])
        #expect(try await world.request(WhereNow(caller: carol, userId: "bob")).isEmpty)
        await expectError(.presenceUserNotExist) {
            _ = try await world.request(GetPresenceState(caller: carol, channel: room, userId: "bob"))
        }
        #expect(try await world.request(GetPresenceState(caller: bob, channel: room, userId: "bob")).states == ["k": "v"])

        await world.leave(bob, "room")
        #expect(world.events(.remoteLeaveChannel, to: alice).isEmpty, "a quiet member leaves unseen")
        await world.stop()
    }

    @Test(arguments: [false, true]) func turningQuietIsALeaveAndTurningVisibleAJoin(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        await world.join(bob, "room", [.message, .presence, .beQuiet])
        await world.join(bob, "room", [.message, .presence])
        #expect(world.events(to: alice).map(\.type) == [.snapshot, .remoteJoinChannel, .remoteLeaveChannel, .remoteJoinChannel])
        #expect(world.events(.snapshot, to: bob).count == 1, "bob kept presence all along")
        await world.stop()
    }

    @Test(arguments: [false, true]) func aLostSessionShowsNothingUntilItsGraceEndsThenTimesOutOnce(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        await world.join(bob, "lobby", type: .stream)
        await world.join(alice, "lobby", type: .stream)
        _ = try await world.request(SetPresenceState(caller: bob, channel: ChannelAddress(.message, "room"), items: [StateItem(key: "k", value: "v")]))
        let before = world.events(to: alice).count

        await world.publish(SessionSuspended(caller: bob))
        await world.publish(SessionResumed(caller: bob))
        await world.publish(SessionSuspended(caller: bob))
        #expect(world.events(to: alice).count == before, "suspension and resume show nothing")
        #expect(try await world.request(WhoNow(caller: alice, channel: ChannelAddress(.message, "room"))).users.map(\.userId) == ["alice", "bob"])

        await world.publish(SessionTimedOut(caller: bob))
        await world.publish(SessionClosed(caller: bob, reason: .timedOut))
        await world.leave(bob, "room", reason: .sessionClosed(.timedOut))
        await world.leave(bob, "lobby", type: .stream, reason: .sessionClosed(.timedOut))

        let timeouts = world.events(.remoteConnectionTimeout, to: alice)
        #expect(timeouts.map(\.channelName).sorted() == ["lobby", "room"])
        #expect(timeouts.allSatisfy { $0.publisher == "bob" && $0.states.isEmpty && $0.firstOrLast })
        #expect(Set(timeouts.map(\.channelType)) == [.message, .stream])
        #expect(world.events(.remoteLeaveChannel, to: alice).isEmpty, "announced once, as a timeout")
        await expectError(.presenceUserNotExist) {
            _ = try await world.request(GetPresenceState(caller: alice, channel: ChannelAddress(.message, "room"), userId: "bob"))
        }
        await world.stop()
    }

    @Test(arguments: [false, true]) func aLeaveAfterTheTimeoutIsAnnouncedAsATimeoutWhenTheSessionEventsAreMissing(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        await world.leave(bob, "room", reason: .sessionClosed(.timedOut))
        #expect(world.events(.remoteConnectionTimeout, to: alice).map(\.publisher) == ["bob"])
        await world.stop()
    }

    @Test(arguments: [false, true]) func aLogoutIsALeaveEverywhereAndLaterEventsOfTheSessionAreIgnored(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        await world.join(bob, "hall")
        await world.join(alice, "hall")
        await world.publish(SessionClosed(caller: bob, reason: .logout))
        await world.leave(bob, "room", reason: .sessionClosed(.logout))
        await world.join(bob, "late")  // a join that raced the session's end
        #expect(world.events(.remoteLeaveChannel, to: alice).map(\.channelName).sorted() == ["hall", "room"])
        #expect(try await world.request(WhereNow(caller: alice, userId: "bob")).isEmpty)
        await expectError(.notLogin) {
            _ = try await world.request(SetPresenceState(caller: bob, channel: ChannelAddress(.message, "late"), items: [StateItem(key: "k", value: "v")]))
        }
        await world.stop()
    }

    @Test(arguments: [false, true]) func joinAndLeaveSayWhetherItWasTheUsersFirstOrLastConnection(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        let phone = PresenceWorld.caller("bob", 20)
        let laptop = PresenceWorld.caller("bob", 21)
        await world.join(alice, "room")
        await world.join(phone, "room")
        await world.join(laptop, "room")
        _ = try await world.request(SetPresenceState(caller: phone, channel: ChannelAddress(.message, "room"), items: [StateItem(key: "k", value: "v")]))
        await world.leave(phone, "room")
        await world.leave(laptop, "room")
        let seen = world.events(to: alice).filter { $0.type != .snapshot && $0.type != .remoteStateChanged }
        #expect(seen.map(\.type) == [.remoteJoinChannel, .remoteJoinChannel, .remoteLeaveChannel, .remoteLeaveChannel])
        #expect(seen.map(\.firstOrLast) == [true, false, false, true])
        #expect(seen.map(\.states) == [[:], [:], ["k": "v"], [:]], "the state stays while a connection does")
        #expect(world.events(.remoteStateChanged, to: laptop).map(\.states) == [["k": "v"]], "the user's other device hears the change")
        await world.stop()
    }

    @Test(arguments: [false, true]) func twoAppsWithTheSameNamesNeverMeet(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        let otherAlice = PresenceWorld.caller("alice", 11, app: "other")
        let otherBob = PresenceWorld.caller("bob", 12, app: "other")
        await world.join(alice, "room")
        await world.join(otherAlice, "room")
        await world.join(bob, "room")
        _ = try await world.request(SetPresenceState(caller: bob, channel: ChannelAddress(.message, "room"), items: [StateItem(key: "k", value: "v")]))
        await world.join(otherBob, "room")
        #expect(world.events(to: alice).map(\.type) == [.snapshot, .remoteJoinChannel, .remoteStateChanged])
        #expect(world.events(to: otherAlice).map(\.type) == [.snapshot, .remoteJoinChannel])
        #expect(world.events(.snapshot, to: otherBob).first?.snapshot == [UserState(userId: "alice"), UserState(userId: "bob")])
        #expect(try await world.request(WhoNow(caller: otherAlice, channel: ChannelAddress(.message, "room"), includeState: true)).users
            == [UserState(userId: "alice"), UserState(userId: "bob")])
        #expect(try await world.request(GetPresenceState(caller: otherAlice, channel: ChannelAddress(.message, "room"), userId: "bob")).states.isEmpty)
        #expect(try await world.request(WhereNow(caller: otherAlice, userId: "bob")) == [ChannelAddress(.message, "room")])
        await world.publish(SessionClosed(caller: otherBob, reason: .logout))
        #expect(world.events(.remoteLeaveChannel, to: alice).isEmpty)
        await world.stop()
    }

    @Test(arguments: [false, true]) func aStreamChannelAndAMessageChannelOfOneNameAreTwoChannels(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room", type: .stream)
        await world.join(bob, "room", type: .message)
        #expect(world.events(.snapshot, to: bob).first?.snapshot.map(\.userId) == ["bob"])
        #expect(world.events(.remoteJoinChannel, to: alice).isEmpty)
        #expect(try await world.request(WhoNow(caller: bob, channel: ChannelAddress(.stream, "room"))).users.map(\.userId) == ["alice"])
        await world.stop()
    }
}

@Suite(.timeLimit(.minutes(2))) struct PresenceStoreSeamTests {
    @Test func theModuleReachesPresenceOnlyThroughItsStore() async throws {
        let world = await PresenceWorld(suspendingStore: true)
        let alice = PresenceWorld.caller("alice", 1), bob = PresenceWorld.caller("bob", 2)
        await world.join(alice, "room")
        await world.join(bob, "room")
        #expect(world.events(to: alice).map(\.type) == [.snapshot, .remoteJoinChannel])
        let calls = world.suspending?.calls.recorded ?? []
        #expect(calls == ["join", "listeners", "members", "occupancy", "join", "listeners", "members", "occupancy"])
        await world.harness.stop()
    }
}
