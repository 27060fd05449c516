import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

/// What the server's API asks presence: a member's state set on its behalf, the channels in use,
/// and the counts of its metrics.
@Suite(.timeLimit(.minutes(2))) struct ServerQueryTests {
    let alice = PresenceWorld.caller("alice", 1)
    let bob = PresenceWorld.caller("bob", 2)
    let bobsPhone = PresenceWorld.caller("bob", 3)
    let carol = PresenceWorld.caller("carol", 4, app: "other")
    let server = Caller.server(app: PresenceWorld.app, userId: "server")
    let room = ChannelAddress(.message, "room")

    @Test(arguments: [false, true]) func theServerSetsAMembersStateAndEveryListenerHearsIt(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        await world.join(alice, "room")
        await world.join(bob, "room")
        _ = try await world.request(
            SetMemberPresenceState(caller: server, channel: room, userId: "bob", items: [StateItem(key: "mood", value: "busy")]))
        #expect(try await world.request(GetPresenceState(caller: alice, channel: room, userId: "bob")).states == ["mood": "busy"])
        #expect(world.events(.remoteStateChanged, to: alice).map(\.states) == [["mood": "busy"]])
        #expect(world.events(.remoteStateChanged, to: bob).map(\.publisher) == ["bob"])

        await expectError(.presenceUserNotExist) {
            _ = try await world.request(
                SetMemberPresenceState(caller: server, channel: room, userId: "carol", items: [StateItem(key: "k", value: "v")]))
        }
        await expectError(.presenceStateDuplicateKey) {
            _ = try await world.request(
                SetMemberPresenceState(
                    caller: server, channel: room, userId: "bob", items: [StateItem(key: "k", value: "1"), StateItem(key: "k", value: "2")]))
        }
        await world.stop()
    }

    @Test func aQuietMembersStateChangeIsKeptButNotAnnounced() async throws {
        let world = await PresenceWorld()
        await world.join(alice, "room")
        await world.join(bob, "room", [.message, .presence, .beQuiet])
        _ = try await world.request(
            SetMemberPresenceState(caller: server, channel: room, userId: "bob", items: [StateItem(key: "k", value: "v")]))
        #expect(try await world.request(GetPresenceState(caller: bob, channel: room, userId: "bob")).states == ["k": "v"])
        #expect(world.events(.remoteStateChanged, to: alice).isEmpty)
        // The positive control: a visible member's change is announced to the same listener.
        _ = try await world.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "k", value: "v")]))
        await world.join(bob, "room")
        _ = try await world.request(
            SetMemberPresenceState(caller: server, channel: room, userId: "bob", items: [StateItem(key: "k", value: "w")]))
        #expect(world.events(.remoteStateChanged, to: alice).map(\.states) == [["k": "w"]])
        await world.stop()
    }

    @Test func channelsAreListedByTypeAndNameAPageAtATimeWithTheirMembers() async throws {
        let world = await PresenceWorld()
        for name in ["room-b", "room-a", "lobby", "room-c"] { await world.join(alice, name) }
        await world.join(bob, "room-a")
        await world.join(bobsPhone, "room-a")
        await world.join(bob, "room-a", type: .stream)
        await world.join(carol, "room-a")
        let first = try await world.request(ListChannels(caller: server, pattern: ChannelPattern("room-*"), limit: 2))
        #expect(first.channels == [
            ChannelSummary(channel: ChannelAddress(.message, "room-a"), members: 3, users: 2),
            ChannelSummary(channel: ChannelAddress(.message, "room-b"), members: 1, users: 1),
        ])
        #expect(first.next == ChannelAddress(.message, "room-b"))
        let second = try await world.request(ListChannels(caller: server, pattern: ChannelPattern("room-*"), after: first.next, limit: 2))
        #expect(second.channels.map(\.channel) == [ChannelAddress(.message, "room-c"), ChannelAddress(.stream, "room-a")])
        #expect(second.next == nil)
        let streams = try await world.request(ListChannels(caller: server, channelType: .stream))
        #expect(streams.channels == [ChannelSummary(channel: ChannelAddress(.stream, "room-a"), members: 1, users: 1)])
        let everything = try await world.request(ListChannels(caller: server))
        #expect(everything.channels.count == 5)

        await expectError(.invalidChannelType) { _ = try await world.request(ListChannels(caller: server, channelType: .user)) }
        await expectError(.invalidParameter) { _ = try await world.request(ListChannels(caller: server, limit: 0)) }
        await world.stop()
    }

    @Test func statisticsCountChannelsAndMembersByTypeAndFollowLeaves() async throws {
        let world = await PresenceWorld()
        await world.join(alice, "room")
        await world.join(bob, "room")
        await world.join(bob, "lobby")
        await world.join(bob, "stage", type: .stream)
        await world.join(carol, "room")
        #expect(try await world.request(PresenceStatistics(app: PresenceWorld.app)) == [
            .message: MembershipCount(channels: 2, members: 3), .stream: MembershipCount(channels: 1, members: 1),
        ])
        #expect(try await world.request(PresenceStatistics())[.message] == MembershipCount(channels: 3, members: 4))
        await world.leave(bob, "lobby")
        await world.publish(SessionClosed(caller: alice, reason: .logout))
        await world.leave(bob, "stage", type: .stream)
        #expect(try await world.request(PresenceStatistics(app: PresenceWorld.app)) == [.message: MembershipCount(channels: 1, members: 1)])
        await world.stop()
    }
}
