import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// The server's API lists and revokes locks without being a member of the channel, and reads
/// the lock counts of its metrics.
@Suite(.timeLimit(.minutes(2))) struct ServerLockCallTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))
    let server = Caller.server(app: "app", userId: "server")

    @Test(arguments: [false, true]) func theServerListsAndRevokesLocksOfAChannelItIsNotIn(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        await world.join(alice)
        await world.join(bob)
        try await world.set("L", by: alice)
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("L", by: bob, retry: true)

        #expect(try await world.locks(seenBy: server) == [LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 1)])
        try await world.revoke("L", from: "alice", by: server)
        #expect(world.grants(to: bob) == [2])
        #expect(try await world.locks(seenBy: server).map(\.owner) == ["bob"])
        #expect(world.events(to: alice).map(\.eventType) == [.snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired])

        // A client that is not a member is still refused, as the reference refuses it.
        await expectError(.channelNotSubscribed) { _ = try await world.locks(seenBy: carol) }
        await expectError(.channelNotSubscribed) { try await world.revoke("L", from: "bob", by: carol) }
        // The server may not take locks of its own: it could never give them back.
        await expectError(.channelNotSubscribed) { _ = try await world.acquire("L", by: server) }
        await world.harness.stop()
    }

    @Test func statisticsCountLocksHeldAndWaiters() async throws {
        let world = await LockWorld.start()
        let dave = Caller(app: "other", userId: "dave", session: SessionID(4))
        for caller in [alice, bob, carol, dave] { await world.join(caller) }
        try await world.set("L", by: alice)
        try await world.set("M", by: alice)
        try await world.set("N", by: dave)
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("L", by: bob, retry: true)
        _ = try await world.acquire("L", by: carol, retry: true)
        _ = try await world.acquire("N", by: dave)
        #expect(try await world.bus.request(LockStatistics(app: "app")) == LockCounts(locks: 2, held: 1, waiters: 2))
        #expect(try await world.bus.request(LockStatistics()) == LockCounts(locks: 3, held: 2, waiters: 2))
        try await world.release("L", by: alice)
        #expect(try await world.bus.request(LockStatistics(app: "app")) == LockCounts(locks: 2, held: 1, waiters: 1))
        await world.harness.stop()
    }
}
