import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// The lock module on the bus: answers with the reference's codes, events to lock members,
/// grants to waiters, ttl on the manual clock, session and channel endings.
@Suite(.timeLimit(.minutes(2))) struct LockModuleTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))

    /// Lock L (ttl 10 s) is alice's, bob waits for it, and alice's connection is lost.
    func aliceOwnsAndLosesHerConnectionWhileBobWaits(_ world: LockWorld) async throws {
        await world.join(alice, features: [.message])
        await world.join(bob, features: [.message])
        try await world.set("L", by: alice, ttl: 10)
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("L", by: bob, retry: true)
        await world.bus.publishAndWait(SessionSuspended(caller: alice))
    }

    @Test(arguments: [false, true]) func lockMembersGetASnapshotThenEveryEvent(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        await world.join(alice, features: [.message])
        try await world.set("M", by: alice, ttl: 60)
        try await world.set("L", by: alice)
        await world.join(carol)
        await world.join(bob, features: [.message, .presence])
        #expect(try await world.acquire("L", by: alice) == .acquired(fencingToken: 1))
        try await world.release("L", by: alice)
        try await world.remove("M", by: bob)
        try await world.set("N", by: bob, ttl: 30)

        let events = world.events(to: carol)
        #expect(events.map(\.eventType) == [.snapshot, .lockAcquired, .lockReleased, .lockRemoved, .lockSet])
        #expect(events.first?.locks == [
            LockDetail(lockName: "L", owner: "", ttl: 10, fencingToken: 0),
            LockDetail(lockName: "M", owner: "", ttl: 60, fencingToken: 0),
        ])
        #expect(events[1].locks == [LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 1)])
        #expect(events[2].locks == [LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 1)])
        #expect(events[3].locks == [LockDetail(lockName: "M", owner: "", ttl: 60, fencingToken: 0)])
        #expect(events[4].locks == [LockDetail(lockName: "N", owner: "", ttl: 30, fencingToken: 0)])
        #expect(events.allSatisfy { $0.channel == ChannelAddress(.message, "room") })
        #expect(events.map(\.timestamp).allSatisfy { $0 == world.harness.clock.wallMilliseconds })
        // Without the lock feature: nothing.
        #expect(world.pushes(to: bob).isEmpty)
        #expect(world.pushes(to: alice).isEmpty)
        // Joining again without the lock feature stops the events.
        await world.join(carol, features: [.message])
        try await world.set("O", by: bob)
        #expect(world.events(to: carol).count == 5)
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func refusalsCarryTheReferenceCodes(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        for caller in [alice, bob, carol] { await world.join(caller, features: [.message]) }
        await world.join(alice, "hall", features: [.message])
        await expectError(.invalidChannelType) {
            try await world.set("L", "bob", by: alice, type: .user)
        }
        await expectError(.invalidChannelName) { try await world.set("L", "", by: alice) }
        await expectError(.invalidChannelName) { try await world.set("L", String(repeating: "c", count: 65), by: alice) }
        await expectError(.lockInvalidName) { try await world.set("", by: alice) }
        await expectError(.lockInvalidName) { try await world.set(String(repeating: "l", count: 65), by: alice) }
        await expectError(.lockInvalidName) { try await world.set("new\nline", by: alice) }
        await expectError(.invalidParameter) { try await world.set("L", by: alice, ttl: 9) }
        await expectError(.invalidParameter) { try await world.set("L", by: alice, ttl: 301) }
        try await world.set("short", by: alice, ttl: 10)
        try await world.set("long", by: alice, ttl: 300)
        try await world.set(String(repeating: "l", count: 64), by: alice)
        await expectError(.lockAlreadyExist) { try await world.set("short", by: bob) }
        for index in 3..<32 { try await world.set("lock\(index)", by: alice) }
        await expectError(.lockOperationFailed) { try await world.set("one-too-many", by: alice) }
        try await world.set("elsewhere", "hall", by: alice)

        await expectError(.lockNotExist) { _ = try await world.acquire("nope", by: alice) }
        _ = try await world.acquire("short", by: alice)
        await expectError(.lockAcquireFailed) { _ = try await world.acquire("short", by: bob) }
        #expect(try await world.acquire("short", by: bob, retry: true) == .queued)
        await expectError(.lockOperationPerforming) { _ = try await world.acquire("short", by: bob, retry: true) }
        await expectError(.lockNotAcquired) { try await world.release("short", by: carol) }
        await expectError(.lockNotAcquired) { try await world.release("long", by: alice) }
        await expectError(.lockNotExist) { try await world.release("nope", by: alice) }
        await expectError(.lockNotAcquired) {
            try await world.revoke("short", from: "bob", by: carol)
        }
        await expectError(.invalidUserId) {
            try await world.revoke("short", from: "", by: carol)
        }
        await expectError(.lockNotExist) {
            try await world.remove("nope", by: carol)
        }
        #expect(try await world.locks(seenBy: carol).count == 32)
        #expect(try await world.locks(seenBy: carol).first { $0.lockName == "short" } == LockDetail(
            lockName: "short", owner: "alice", ttl: 10, fencingToken: 1))
        await world.harness.stop()
    }

    @Test func anAppHasAtMostItsLimitOfLocksAndOtherAppsAreNotCounted() async throws {
        var limits = Limits()
        limits.locks.perApp = 3
        let world = await LockWorld.start(limits: limits)
        let otherAlice = Caller(app: "other", userId: "alice", session: SessionID(11))
        for channel in ["room", "hall"] { await world.join(alice, channel, features: [.message]) }
        await world.join(otherAlice, features: [.message])
        try await world.set("L", by: alice)
        try await world.set("M", by: alice)
        try await world.set("L", "hall", by: alice)
        await expectError(.lockOperationFailed) { try await world.set("N", "hall", by: alice) }
        await expectError(.lockOperationFailed) { try await world.set("N", by: alice) }
        for name in ["L", "M", "N"] { try await world.set(name, by: otherAlice) }
        // A removed lock makes room for another.
        try await world.remove("M", by: alice)
        try await world.set("N", "hall", by: alice)
        #expect(try await world.locks("hall", seenBy: alice).map(\.lockName) == ["L", "N"])
        #expect(world.store.count(in: "app") == 3)
        #expect(world.store.count(in: "other") == 3)
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func waitersAreGrantedInTheOrderTheyCame(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        await world.join(alice)
        for caller in [bob, carol] { await world.join(caller, features: [.message]) }
        try await world.set("L", by: alice)
        _ = try await world.acquire("L", by: alice)
        #expect(try await world.acquire("L", by: carol, retry: true) == .queued)
        #expect(try await world.acquire("L", by: bob, retry: true) == .queued)
        try await world.release("L", by: alice)
        #expect(world.pushes(to: carol) == [.granted(LockAddress(.message, "room", "L"), fencingToken: 2)])
        #expect(world.grants(to: bob).isEmpty)
        #expect(try await world.check("L", by: carol) == LockHold(fencingToken: 2))
        await expectError(.lockNotAcquired) { _ = try await world.check("L", by: bob) }
        // Revoked from carol, it goes to bob.
        try await world.revoke("L", from: "carol", by: alice)
        #expect(world.grants(to: bob) == [3])
        #expect(world.events(to: alice).map(\.eventType) == [
            .snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired, .lockReleased, .lockAcquired,
        ])
        #expect(world.events(to: alice).last?.locks.first?.owner == "bob")
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func aWaiterCanWithdrawAndARemovedLockEndsTheWait(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        for caller in [alice, bob, carol] { await world.join(caller, features: [.message]) }
        try await world.set("L", by: alice)
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("L", by: bob, retry: true)
        _ = try await world.acquire("L", by: carol, retry: true)
        try await world.release("L", by: bob)
        #expect(world.pushes(to: bob) == [
            .waitFailed(LockAddress(.message, "room", "L"), code: .lockAcquireFailed, reason: "stopped waiting for L with releaseLock")
        ])
        try await world.remove("L", by: bob)
        guard case .waitFailed(_, let code, _)? = world.pushes(to: carol).last else {
            Issue.record("carol's wait must end")
            return
        }
        #expect(code == .lockNotExist)
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func aLostOwnerKeepsTheLockForItsTTLThenItExpiresToTheNextWaiter(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        await world.join(carol)
        try await aliceOwnsAndLosesHerConnectionWhileBobWaits(world)
        await world.advance(by: .milliseconds(9_900))
        #expect(try await world.locks(seenBy: carol).first?.owner == "alice")
        #expect(world.grants(to: bob).isEmpty)
        await world.advance(by: .milliseconds(200))
        #expect(world.grants(to: bob) == [2])
        #expect(world.events(to: carol).map(\.eventType) == [.snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired])
        #expect(world.events(to: carol)[3].locks.first?.owner == "alice")
        // alice comes back too late: the lock is bob's.
        await world.bus.publishAndWait(SessionResumed(caller: alice))
        await expectError(.lockNotAcquired) { try await world.release("L", by: alice) }
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func anOwnerBackInTimeKeepsTheLock(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        try await aliceOwnsAndLosesHerConnectionWhileBobWaits(world)
        await world.advance(by: .seconds(9))
        await world.bus.publishAndWait(SessionResumed(caller: alice))
        await world.advance(by: .seconds(60))
        #expect(try await world.check("L", by: alice) == LockHold(fencingToken: 1))
        #expect(world.grants(to: bob).isEmpty)
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func aWaiterAwayWhenItsTurnComesHasItsTTLToComeBack(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        for caller in [alice, bob, carol] { await world.join(caller, features: [.message]) }
        try await world.set("L", by: alice, ttl: 10)
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("L", by: bob, retry: true)
        _ = try await world.acquire("L", by: carol, retry: true)
        await world.bus.publishAndWait(SessionSuspended(caller: bob))
        try await world.release("L", by: alice)
        // The grant waits in bob's outbox for a resume; if bob is not back within the ttl, carol gets it.
        #expect(world.grants(to: bob) == [2])
        await world.advance(by: .seconds(11))
        #expect(world.grants(to: carol) == [3])
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func logoutOrLeavingReleasesAtOnceAndEndsWaits(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        for caller in [alice, bob] { await world.join(caller, features: [.message]) }
        try await world.set("L", by: alice)
        try await world.set("M", by: alice)
        await world.join(carol, "room")
        _ = try await world.acquire("L", by: alice)
        _ = try await world.acquire("M", by: bob)
        _ = try await world.acquire("L", by: bob, retry: true)
        _ = try await world.acquire("M", by: alice, retry: true)
        // bob unsubscribes: M is released (and goes to alice), his wait for L fails.
        await world.leave(bob)
        #expect(world.pushes(to: bob) == [
            .waitFailed(LockAddress(.message, "room", "L"), code: .lockAcquireFailed, reason: "left the channel while waiting for L")
        ])
        #expect(world.pushes(to: alice) == [.granted(LockAddress(.message, "room", "M"), fencingToken: 3)])
        // alice logs out: both her locks are free at once.
        await world.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        #expect(try await world.locks(seenBy: carol).map(\.owner) == ["", ""])
        #expect(world.events(to: carol).suffix(2).map(\.eventType) == [.lockReleased, .lockReleased])
        // A session that timed out gives its lock back with lockReleased too.
        await world.join(bob, features: [.message])
        _ = try await world.acquire("L", by: bob)
        await world.bus.publishAndWait(SessionSuspended(caller: bob))
        await world.bus.publishAndWait(SessionClosed(caller: bob, reason: .timedOut))
        #expect(world.events(to: carol).last?.eventType == .lockReleased)
        #expect(world.events(to: carol).last?.locks.first?.owner == "bob")
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func checkLockHolderAnswersStorageWithFencingTokens(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        for caller in [alice, bob] { await world.join(caller, features: [.message]) }
        await expectError(.lockNotExist) { _ = try await world.check("L", by: alice) }
        try await world.set("L", by: alice)
        await expectError(.lockNotAcquired) { _ = try await world.check("L", by: alice) }
        _ = try await world.acquire("L", by: alice)
        #expect(try await world.check("L", by: alice) == LockHold(fencingToken: 1))
        #expect(try await world.check("L", by: alice, token: 1) == LockHold(fencingToken: 1))
        await expectError(.lockNotAcquired) { _ = try await world.check("L", by: bob) }
        // A newer acquisition, even by the same session, makes the old token stale.
        try await world.revoke("L", from: "alice", by: bob)
        _ = try await world.acquire("L", by: alice)
        await expectError(.lockNotAcquired) { _ = try await world.check("L", by: alice, token: 1) }
        #expect(try await world.check("L", by: alice, token: 2) == LockHold(fencingToken: 2))
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func anAcquireRacingItsSessionsEndNeverLeavesALockToADeadSession(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        let owner = Caller(app: "app", userId: "owner", session: SessionID(1_000))
        await world.join(owner, features: [.message])
        for round in 0..<200 {
            let doomed = Caller(app: "app", userId: "u\(round)", session: SessionID(UInt64(10 + round)))
            await world.join(doomed, features: [.message])
            let name = "L\(round % 30)"
            if round < 30 { try await world.set(name, by: owner) }
            // Every other round the lock is held, so the doomed session would wait in line.
            let held = round.isMultiple(of: 2)
            if held { _ = try await world.acquire(name, by: owner) }
            let ending = SessionClosed(caller: doomed, reason: .logout)
            switch round % 3 {
            case 0:
                await world.bus.publishAndWait(ending)
                await expectError(.notLogin) { _ = try await world.acquire(name, by: doomed, retry: true) }
            case 1:
                _ = try await world.acquire(name, by: doomed, retry: true)
                await world.bus.publishAndWait(ending)
            default:
                async let attempt = try? world.acquire(name, by: doomed, retry: true)
                async let ended: Void = world.bus.publishAndWait(ending)
                _ = await (attempt, ended)
            }
            if held { try await world.release(name, by: owner) }
            #expect(try await world.locks(seenBy: owner).first { $0.lockName == name }?.owner == "")
            #expect(world.store.lineLength(of: name, in: owner.channel(.message, "room")) == 0)
        }
        await world.harness.stop()
    }

    @Test(arguments: [false, true]) func appsNeverSeeEachOthersLocks(suspendingStore: Bool) async throws {
        let world = await LockWorld.start(suspending: suspendingStore)
        let otherAlice = Caller(app: "other", userId: "alice", session: SessionID(11))
        let otherCarol = Caller(app: "other", userId: "carol", session: SessionID(13))
        await world.join(carol)
        await world.join(otherCarol)
        for caller in [alice, otherAlice] { await world.join(caller, features: [.message]) }
        try await world.set("L", by: alice)
        await expectError(.lockNotExist) { _ = try await world.acquire("L", by: otherAlice) }
        try await world.set("L", by: otherAlice, ttl: 20)
        _ = try await world.acquire("L", by: alice)
        #expect(try await world.acquire("L", by: otherAlice) == .acquired(fencingToken: 2))
        await world.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        #expect(try await world.locks(seenBy: otherCarol) == [LockDetail(lockName: "L", owner: "alice", ttl: 20, fencingToken: 2)])
        #expect(world.events(to: carol).map(\.eventType) == [.snapshot, .lockSet, .lockAcquired, .lockReleased])
        #expect(world.events(to: otherCarol).map(\.eventType) == [.snapshot, .lockSet, .lockAcquired])
        #expect(world.events(to: otherCarol).allSatisfy { $0.locks.allSatisfy { $0.ttl != 10 } })
        await world.harness.stop()
    }
}

@Suite(.timeLimit(.minutes(2))) struct LockStoreSeamTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))

    @Test func theModuleReachesItsLocksOnlyThroughItsStore() async throws {
        let world = await LockWorld.start(suspending: true)
        await world.join(alice)
        await world.join(bob)
        try await world.set("L", by: alice)
        #expect(try await world.acquire("L", by: alice) == .acquired(fencingToken: 1))
        #expect(try await world.acquire("L", by: bob, retry: true) == .queued)
        try await world.release("L", by: alice)
        #expect(world.grants(to: bob) == [2])
        let calls = world.suspending?.calls.recorded ?? []
        #expect(calls == ["locks", "locks", "setLock", "acquireLock", "acquireLock", "releaseLock"])
        await world.harness.stop()
    }
}
