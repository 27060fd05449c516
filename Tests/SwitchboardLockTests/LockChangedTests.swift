import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// `LockChanged` on the bus, for the webhooks: every change in the store's order, a revocation
/// told apart from a release, and nothing built while nobody listens.
@Suite(.timeLimit(.minutes(1))) struct LockChangedTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))

    @Test func everyChangeIsPublishedInOrderWithRevocationsAndExpiriesNamed() async throws {
        let world = await LockWorld.start()
        world.harness.recorder.record(LockChanged.self, on: world.bus)
        await world.join(alice)
        await world.join(bob)
        try await world.set("L", by: alice)
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("L", by: bob, retry: true)
        try await world.release("L", by: alice)
        try await world.revoke("L", from: "bob", by: alice)
        _ = try await world.acquire("L", by: alice)
        await world.bus.publishAndWait(SessionSuspended(caller: alice))
        await world.advance(by: .seconds(11))
        try await world.remove("L", by: bob)
        let expected: [(LockChange, UserID)] = [
            (.set, ""), (.acquired, "alice"), (.released, "alice"), (.acquired, "bob"), (.revoked, "bob"), (.acquired, "alice"),
            (.expired, "alice"), (.removed, ""),
        ]
        #expect(await eventually { world.harness.recorder.events(of: LockChanged.self).count == expected.count })
        let changes = world.harness.recorder.events(of: LockChanged.self)
        #expect(changes.map(\.change) == expected.map(\.0))
        #expect(changes.map(\.lock.owner) == expected.map(\.1))
        #expect(changes.allSatisfy { $0.channel == ChannelKey(app: "app", .message, "room") && $0.lock.lockName == "L" })
        await world.harness.stop()
    }
}
