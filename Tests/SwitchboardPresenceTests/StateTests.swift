import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct StateTests {
    let alice = PresenceWorld.caller("alice", 1)
    let bob = PresenceWorld.caller("bob", 2)
    let room = ChannelAddress(.message, "room")

    func set(_ world: PresenceWorld, _ member: Caller, _ pairs: [(String, String)], in channel: ChannelAddress? = nil) async throws {
        _ = try await world.request(
            SetPresenceState(caller: member, channel: channel ?? room, items: pairs.map { StateItem(key: $0.0, value: $0.1) }))
    }

    @Test(arguments: [false, true]) func setMergesRemoveTakesKeysOrEverythingAndGetReads(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        try await set(world, alice, [("a", "1"), ("b", "2")])
        try await set(world, alice, [("b", "3"), ("c", "4")])
        #expect(try await world.request(GetPresenceState(caller: bob, channel: room, userId: "alice"))
            == UserState(userId: "alice", states: ["a": "1", "b": "3", "c": "4"]))
        _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: ["a", "nope"]))
        #expect(try await world.request(GetPresenceState(caller: bob, channel: room, userId: "alice")).states == ["b": "3", "c": "4"])
        _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: []))
        #expect(try await world.request(GetPresenceState(caller: bob, channel: room, userId: "alice")).states.isEmpty)
        #expect(world.events(.remoteStateChanged, to: bob).map(\.states) == [["a": "1", "b": "2"], ["a": "1", "b": "3", "c": "4"], ["b": "3", "c": "4"], [:]])
        await world.stop()
    }

    @Test(arguments: [false, true]) func aChangeThatChangesNothingIsNotAnnounced(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        try await set(world, alice, [("a", "1")])
        try await set(world, alice, [("a", "1")])
        _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: ["b"]))
        #expect(world.events(.remoteStateChanged, to: bob).count == 1)
        await world.stop()
    }

    @Test(arguments: [false, true]) func statesAreSetByMembersOnly(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await expectError(.channelNotSubscribed) { try await set(world, alice, [("a", "1")]) }
        await expectError(.channelNotJoined) { try await set(world, alice, [("a", "1")], in: ChannelAddress(.stream, "room")) }
        await expectError(.channelNotSubscribed) {
            _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: []))
        }
        await expectError(.presenceUserNotExist) {
            _ = try await world.request(GetPresenceState(caller: alice, channel: room, userId: "bob"))
        }
        await world.stop()
    }

    @Test(arguments: [false, true]) func limitsAreRefusedWithTheReferenceCodesAndChangeNothing(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        let limits = Limits()
        await world.join(alice, "room")
        await expectError(.presenceInvalidArgument) { try await set(world, alice, []) }
        await expectError(.presenceInvalidStateKey) { try await set(world, alice, [("", "x")]) }
        await expectError(.presenceInvalidStateKey) { try await set(world, alice, [("a\nb", "x")]) }
        await expectError(.presenceStateKeySizeOverflow) { try await set(world, alice, [(String(repeating: "k", count: 33), "x")]) }
        try await set(world, alice, [(String(repeating: "é", count: 32), "x")])
        await expectError(.presenceStateValueSizeOverflow) {
            try await set(world, alice, [("big", String(repeating: "v", count: limits.presence.stateValueMaxBytes + 1))])
        }
        await expectError(.presenceStateDuplicateKey) { try await set(world, alice, [("a", "1"), ("a", "2")]) }
        await expectError(.presenceStateCountOverflow) { try await set(world, alice, (0..<33).map { ("k\($0)", "v") }) }
        try await set(world, alice, (0..<31).map { ("k\($0)", "v") })
        await expectError(.presenceStateCountOverflow) { try await set(world, alice, [("one", "1"), ("two", "2")]) }
        try await set(world, alice, [("k0", "replaced")])
        let value = String(repeating: "v", count: 7 * 1024)
        _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: []))
        try await set(world, alice, [("a", value), ("b", value)])
        await expectError(.presenceStateValueSizeOverflow) { try await set(world, alice, [("c", value)]) }
        #expect(try await world.request(GetPresenceState(caller: alice, channel: room, userId: "alice")).states == ["a": value, "b": value])
        await expectError(.presenceInvalidStateKey) {
            _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: [""]))
        }
        await expectError(.invalidChannelType) {
            try await set(world, alice, [("a", "1")], in: ChannelAddress(.user, "bob"))
        }
        await expectError(.invalidChannelName) {
            try await set(world, alice, [("a", "1")], in: ChannelAddress(.message, String(repeating: "n", count: 65)))
        }
        await expectError(.invalidUserId) {
            _ = try await world.request(GetPresenceState(caller: alice, channel: room, userId: ""))
        }
        await world.stop()
    }

    @Test(arguments: [false, true]) func aQuietMembersStateIsKeptButNotAnnounced(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room", [.presence, .beQuiet])
        try await set(world, bob, [("hidden", "yes")])
        #expect(world.events(.remoteStateChanged, to: alice).isEmpty)
        await world.join(bob, "room", [.presence])
        let join = try #require(world.events(.remoteJoinChannel, to: alice).first)
        #expect(join.states == ["hidden": "yes"], "turning visible shows the state it kept")
        await world.stop()
    }

    @Test(arguments: [false, true]) func aUsersStateIsClearedWhenItsLastConnectionLeaves(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        try await set(world, bob, [("a", "1")])
        await world.leave(bob, "room")
        await world.join(bob, "room")
        #expect(try await world.request(GetPresenceState(caller: alice, channel: room, userId: "bob")).states.isEmpty)
        #expect(world.events(.remoteJoinChannel, to: alice).last?.states == [:])
        await world.stop()
    }
}
