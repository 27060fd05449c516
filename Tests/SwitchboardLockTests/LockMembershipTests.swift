import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// Locks belong to the members of their channel: only members may call them; a member who goes
/// gives back what it holds, and a lock lives until `removeLock`, whoever is left.
@Suite(.timeLimit(.minutes(2))) struct LockMembershipTests {
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

    @Test func theLastMemberLeavingKeepsTheChannelsLocks() async throws {
        // A lock lives until removeLock: writes it guards must still find it when the channel
        // fills again (else they fail with storageInvalidLockName).
        let world = await LockWorld.start()
        await world.join(alice, features: [.message])
        await world.join(bob, features: [.message])
        await world.join(carol, "hall", features: [.message])
        try await world.set("L", "hall", by: carol)
        try await world.set("L", by: alice)
        try await world.set("M", by: bob)
        _ = try await world.acquire("L", by: alice)
        #expect(try await world.acquire("L", by: bob, retry: true) == .queued)
        // bob leaves: his wait ends, and alice, still there, keeps the lock.
        await world.leave(bob)
        #expect(world.pushes(to: bob) == [
            .waitFailed(LockAddress(.message, "room", "L"), code: .lockAcquireFailed, reason: "left the channel while waiting for L")
        ])
        #expect(try await world.locks(seenBy: alice).map(\.lockName) == ["L", "M"])
        // alice, the last member, leaves: she gives L back, and both locks stay, free.
        await world.leave(alice)
        await world.join(bob)
        let snapshot = try #require(world.events(to: bob).first)
        #expect(snapshot.eventType == .snapshot)
        #expect(snapshot.locks.map(\.lockName) == ["L", "M"] && snapshot.locks.allSatisfy { $0.owner.isEmpty })
        #expect(try await world.acquire("L", by: bob) == .acquired(fencingToken: 2))
        #expect(try await world.locks("hall", seenBy: carol).map(\.lockName) == ["L"])
        #expect(world.store.count(in: "app") == 3)
        await world.harness.stop()
    }

    @Test func theLastMembersSessionEndingKeepsTheChannelsLocksAndReleasesThem() async throws {
        let world = await LockWorld.start()
        for caller in [alice, bob] { await world.join(caller, "hall", type: .stream, features: []) }
        await world.join(alice, "room", features: [.message])
        await world.join(carol, "room", features: [.lock])
        try await world.set("L", "hall", by: alice, type: .stream)
        try await world.set("L", "room", by: alice)
        _ = try await world.acquire("L", "room", by: alice)
        await world.bus.publishAndWait(SessionClosed(caller: bob, reason: .logout))
        #expect(try await world.locks("hall", seenBy: alice, type: .stream).map(\.lockName) == ["L"])
        // alice's session times out: hall has nobody left and keeps its lock; room's is released
        // with the reference's lockReleased.
        await world.bus.publishAndWait(SessionClosed(caller: alice, reason: .timedOut))
        await world.join(carol, "hall", type: .stream, features: [])
        #expect(try await world.locks("hall", seenBy: carol, type: .stream).map(\.lockName) == ["L"])
        #expect(try await world.locks("room", seenBy: carol).map(\.owner) == [""])
        #expect(world.events(to: carol).map(\.eventType) == [.snapshot, .lockSet, .lockAcquired, .lockReleased])
        #expect(world.store.count(in: "app") == 2)
        await world.harness.stop()
    }

    @Test func anAcquireRacingTheMembersDepartureNeverLeavesTheLockHeld() async throws {
        let world = await LockWorld.start()
        // Races until each kind of departure has met an acquire that got in before it (so there
        // was a lock for it to give back), at least 100 rounds and at most 5,000.
        var acquired = (leaving: 0, sessionEnding: 0)
        var round = 0
        while round < 100 || (min(acquired.leaving, acquired.sessionEnding) == 0 && round < 5_000) {
            let member = Caller(app: "app", userId: "u\(round)", session: SessionID(UInt64(100 + round)))
            let channel = "c\(round)"
            await world.join(member, channel, features: [.message])
            try await world.set("L", channel, by: member)
            async let acquire: LockAcquisition? = try? world.acquire("L", channel, by: member)
            // Every third round the acquire is given a head start: how the two tasks are
            // scheduled otherwise depends on the machine's load, and a busy one can let the
            // departure win every round.
            if round % 3 == 0 { await Task.yield() }
            if round.isMultiple(of: 2) {
                async let gone: Void = world.leave(member, channel)
                if await (acquire, gone).0 != nil { acquired.leaving += 1 }
            } else {
                async let gone: Void = world.bus.publishAndWait(SessionClosed(caller: member, reason: .logout))
                if await (acquire, gone).0 != nil { acquired.sessionEnding += 1 }
            }
            #expect(world.store.counts(in: "app").held == 0, "round \(round)")
            round += 1
        }
        #expect(world.store.count(in: "app") == round, "every lock stays until removeLock")
        #expect(acquired.leaving > 0 && acquired.sessionEnding > 0, "\(acquired) in \(round) rounds")
        await world.harness.stop()
    }
}
