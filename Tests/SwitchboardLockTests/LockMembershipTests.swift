import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// Locks belong to the members of their channel: only members may call them.
@Suite struct LockMembershipTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))

    /// Each lock call of `caller` on lock L of `channel`.
    func everyCall(of caller: Caller, on channel: ChannelAddress, _ world: LockWorld) -> [() async throws -> Void] {
        let lock = LockAddress(channel, "L")
        let bus = world.bus
        return [
            { _ = try await bus.request(SetLock(caller: caller, lock: lock, ttl: nil)) },
            { _ = try await bus.request(AcquireLock(caller: caller, lock: lock, retry: true)) },
            { _ = try await bus.request(ReleaseLock(caller: caller, lock: lock)) },
            { _ = try await bus.request(RevokeLock(caller: caller, lock: lock, userId: "alice")) },
            { _ = try await bus.request(GetLocks(caller: caller, channel: channel)) },
            { _ = try await bus.request(RemoveLock(caller: caller, lock: lock)) },
        ]
    }

    @Test func lockCallsAreForMembersOfTheChannelOnly() async throws {
        let world = await LockWorld.start()
        let room = ChannelAddress(.message, "room"), hall = ChannelAddress(.stream, "hall")
        // Nobody in either channel yet.
        for call in everyCall(of: alice, on: room, world) { await expectError(.channelNotSubscribed, call) }
        for call in everyCall(of: alice, on: hall, world) { await expectError(.channelNotJoined, call) }
        // Members may; a stranger still may not, and a message channel of the same name is another channel.
        await world.join(alice, features: [.message])
        await world.join(alice, "hall", type: .stream, features: [])
        try await world.set("L", by: alice)
        #expect(try await world.acquire("L", by: alice) == .acquired(fencingToken: 1))
        try await world.revoke("L", from: "alice", by: alice)
        #expect(try await world.acquire("L", by: alice) == .acquired(fencingToken: 2))
        try await world.release("L", by: alice)
        #expect(try await world.locks(seenBy: alice).map(\.lockName) == ["L"])
        try await world.remove("L", by: alice)
        try await world.set("L", "hall", by: alice, type: .stream)
        #expect(try await world.locks("hall", seenBy: alice, type: .stream).map(\.lockName) == ["L"])
        for call in everyCall(of: bob, on: hall, world) { await expectError(.channelNotJoined, call) }
        await expectError(.channelNotSubscribed) { try await world.set("L", "hall", by: alice) }
        // A member who left is a stranger again; bob stays, so the lock stays.
        await world.join(bob, "hall", type: .stream, features: [])
        await world.leave(alice, "hall", type: .stream)
        for call in everyCall(of: alice, on: hall, world) { await expectError(.channelNotJoined, call) }
        #expect(try await world.locks("hall", seenBy: bob, type: .stream).map(\.lockName) == ["L"])
        // Checks of the request itself come first.
        await expectError(.lockInvalidName) { try await world.set("", "hall", by: carol, type: .stream) }
        await world.harness.stop()
    }
}
