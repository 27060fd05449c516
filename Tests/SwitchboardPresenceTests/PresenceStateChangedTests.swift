import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

/// `PresenceStateChanged` on the bus, for the webhooks: each change of a member's state with the
/// whole state, a change that changes nothing left out.
@Suite(.timeLimit(.minutes(1))) struct PresenceStateChangedTests {
    let alice = PresenceWorld.caller("alice", 1)
    let room = ChannelAddress(.message, "room")

    @Test func eachStateChangeIsPublishedWithTheWholeState() async throws {
        let world = await PresenceWorld(suspendingStore: false)
        world.harness.recorder.record(PresenceStateChanged.self, on: world.bus)
        await world.join(alice, "room")
        _ = try await world.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "a", value: "1")]))
        _ = try await world.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "a", value: "1")]))
        _ = try await world.request(RemovePresenceState(caller: alice, channel: room, keys: []))
        #expect(await eventually { world.harness.recorder.events(of: PresenceStateChanged.self).count == 2 })
        let changes = world.harness.recorder.events(of: PresenceStateChanged.self)
        #expect(changes.map(\.states) == [["a": "1"], [:]])
        #expect(changes.allSatisfy { $0.user == UserKey("app", "alice") && $0.channel == ChannelKey(app: "app", .message, "room") })
        await world.stop()
    }
}
