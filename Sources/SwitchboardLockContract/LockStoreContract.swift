import Testing
import SwitchboardCore
import SwitchboardLock

/// What every `LockStore` does, whatever keeps its locks: the refusals and limits, the fencing
/// tokens, the fair line, hand-overs, ttl countdowns, sessions leaving and ending, app isolation,
/// each with the exact effects in order. Each scenario runs on a new, opened, empty store; the
/// store tests of each kind run them all (`@Test(arguments: LockStoreContract.allCases)`).
public enum LockStoreContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case setRefusesATakenNameAndFullChannelsAndApps
    case acquireGivesAFreeLockAndTokensOnlyGrow
    case aReleasedLockGoesToTheFirstInLine
    case releaseAndRevokeNeedTheOwner
    case removeEndsTheWaitsAndTheLockLivesUntilThen
    case aLostOwnersTtlHandsTheLockOverWhenItRunsOut
    case leavingAndEndingGiveLocksBackAndLeaveLines
    case channelsAndAppsNeverMeet

    public var testDescription: String { rawValue }

    /// Runs the scenario on `store` (new, opened and empty).
    public func run(on store: any LockStore) async throws {
        switch self {
        case .setRefusesATakenNameAndFullChannelsAndApps: try await setRefuses(store)
        case .acquireGivesAFreeLockAndTokensOnlyGrow: try await acquireGivesAFreeLock(store)
        case .aReleasedLockGoesToTheFirstInLine: try await releasedGoesToTheLine(store)
        case .releaseAndRevokeNeedTheOwner: try await releaseAndRevokeNeedTheOwner(store)
        case .removeEndsTheWaitsAndTheLockLivesUntilThen: try await removeEndsTheWaits(store)
        case .aLostOwnersTtlHandsTheLockOverWhenItRunsOut: try await ttlHandsOver(store)
        case .leavingAndEndingGiveLocksBackAndLeaveLines: try await leavingAndEnding(store)
        case .channelsAndAppsNeverMeet: try await channelsAndAppsNeverMeet(store)
        }
    }

    private static let room = ChannelKey(app: "app", .message, "room")
    private static let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    private static let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    private static let carol = Caller(app: "app", userId: "carol", session: SessionID(3))
    /// The wall-clock time the countdowns start from.
    private static let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    private static func detail(_ owner: String = "", ttl: Int = 10, token: UInt64 = 0, name: String = "L") -> LockDetail {
        LockDetail(lockName: name, owner: owner, ttl: ttl, fencingToken: token)
    }

    private static func refusal(_ body: () async throws -> Void) async -> LockRefusal? {
        do {
            try await body()
            return nil
        } catch {
            return error as? LockRefusal
        }
    }

    private static func token(_ acquisition: LockAcquisition) -> UInt64? {
        if case .acquired(let token) = acquisition { token } else { nil }
    }

    private func setRefuses(_ store: any LockStore) async throws {
        let room = Self.room
        #expect(try await store.setLock("L", in: room, ttl: 30, maxLocks: 2, maxLocksInApp: 3) == [.event(room, .lockSet, Self.detail(ttl: 30))])
        #expect(await Self.refusal { _ = try await store.setLock("L", in: room, ttl: 30, maxLocks: 2, maxLocksInApp: 3) } == .alreadyExists)
        _ = try await store.setLock("M", in: room, ttl: 30, maxLocks: 2, maxLocksInApp: 3)
        #expect(await Self.refusal { _ = try await store.setLock("N", in: room, ttl: 30, maxLocks: 2, maxLocksInApp: 3) } == .tooManyLocks(limit: 2))
        let stream = ChannelKey(app: "app", .stream, "room")
        _ = try await store.setLock("N", in: stream, ttl: 30, maxLocks: 2, maxLocksInApp: 3)
        #expect(
            await Self.refusal { _ = try await store.setLock("O", in: stream, ttl: 30, maxLocks: 2, maxLocksInApp: 3) }
                == .tooManyLocksInApp(limit: 3))
        // Another app counts apart; a removed lock frees its place.
        _ = try await store.setLock("O", in: ChannelKey(app: "other", .message, "room"), ttl: 30, maxLocks: 2, maxLocksInApp: 3)
        _ = try await store.removeLock("N", in: stream)
        _ = try await store.setLock("O", in: stream, ttl: 30, maxLocks: 2, maxLocksInApp: 3)
        #expect(try await store.locks(in: room) == [Self.detail(ttl: 30), Self.detail(ttl: 30, name: "M")])
        #expect(try await store.counts(in: "app") == LockCounts(locks: 3, held: 0, waiters: 0))
        #expect(try await store.counts(in: nil) == LockCounts(locks: 4, held: 0, waiters: 0))
    }

    private func acquireGivesAFreeLock(_ store: any LockStore) async throws {
        let (room, alice, bob, now) = (Self.room, Self.alice, Self.bob, Self.start)
        _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
        let (first, effects) = try await store.acquireLock("L", in: room, by: alice, wait: false, now: now)
        let token = try #require(Self.token(first))
        #expect(effects == [.event(room, .lockAcquired, Self.detail("alice", token: token))])
        // Again by its owner: the same acquisition, nothing happens.
        let again = try await store.acquireLock("L", in: room, by: alice, wait: true, now: now)
        #expect(again.0 == .acquired(fencingToken: token) && again.1.isEmpty)
        #expect(await Self.refusal { _ = try await store.acquireLock("L", in: room, by: bob, wait: false, now: now) } == .heldByOther(owner: "alice"))
        #expect(try await store.holder(of: "L", in: room) == LockHolding(session: alice.session, userId: "alice", fencingToken: token))
        #expect(try await store.locks(in: room) == [Self.detail("alice", token: token)])
        // Every later acquisition of the lock has a larger token, across a removal and a new set.
        var last = token
        for _ in 0..<3 {
            _ = try await store.releaseLock("L", in: room, by: alice, now: now)
            #expect(try await store.holder(of: "L", in: room) == nil)
            let next = try #require(Self.token(try await store.acquireLock("L", in: room, by: bob, wait: false, now: now).0))
            #expect(next > last)
            last = next
            _ = try await store.removeLock("L", in: room)
            _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
            let renewed = try #require(Self.token(try await store.acquireLock("L", in: room, by: alice, wait: false, now: now).0))
            #expect(renewed > last)
            last = renewed
        }
        #expect(await Self.refusal { _ = try await store.acquireLock("X", in: room, by: alice, wait: true, now: now) } == .notExist)
        #expect(await Self.refusal { _ = try await store.holder(of: "X", in: room) } == .notExist)
    }

    private func releasedGoesToTheLine(_ store: any LockStore) async throws {
        let (room, alice, bob, carol, now) = (Self.room, Self.alice, Self.bob, Self.carol, Self.start)
        _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
        let first = try #require(Self.token(try await store.acquireLock("L", in: room, by: alice, wait: false, now: now).0))
        #expect(try await store.acquireLock("L", in: room, by: bob, wait: true, now: now) == (.queued, []))
        #expect(try await store.acquireLock("L", in: room, by: carol, wait: true, now: now) == (.queued, []))
        #expect(await Self.refusal { _ = try await store.acquireLock("L", in: room, by: bob, wait: true, now: now) } == .alreadyWaiting)
        #expect(try await store.counts(in: "app") == LockCounts(locks: 1, held: 1, waiters: 2))
        let handedOver = try await store.releaseLock("L", in: room, by: alice, now: now)
        guard handedOver.count == 3, case .granted(bob.session, room, "L", let second) = handedOver[2] else {
            Issue.record("not a hand-over to bob: \(handedOver)")
            return
        }
        #expect(second > first)
        #expect(
            handedOver == [
                .event(room, .lockReleased, Self.detail("alice", token: first)),
                .event(room, .lockAcquired, Self.detail("bob", token: second)),
                .granted(bob.session, room, lockName: "L", fencingToken: second),
            ])
        let next = try await store.releaseLock("L", in: room, by: bob, now: now)
        guard next.count == 3, case .granted(carol.session, room, "L", let third) = next[2] else {
            Issue.record("not a hand-over to carol: \(next)")
            return
        }
        #expect(third > second)
        #expect(try await store.releaseLock("L", in: room, by: carol, now: now) == [.event(room, .lockReleased, Self.detail("carol", token: third))])
        #expect(try await store.counts(in: "app") == LockCounts(locks: 1, held: 0, waiters: 0))
    }

    private func releaseAndRevokeNeedTheOwner(_ store: any LockStore) async throws {
        let (room, alice, bob, carol, now) = (Self.room, Self.alice, Self.bob, Self.carol, Self.start)
        _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
        #expect(await Self.refusal { _ = try await store.releaseLock("L", in: room, by: alice, now: now) } == .notOwner(owner: ""))
        #expect(await Self.refusal { _ = try await store.revokeLock("L", in: room, from: "alice", now: now) } == .notOwner(owner: ""))
        let token = try #require(Self.token(try await store.acquireLock("L", in: room, by: alice, wait: false, now: now).0))
        _ = try await store.acquireLock("L", in: room, by: carol, wait: true, now: now)
        #expect(await Self.refusal { _ = try await store.releaseLock("L", in: room, by: bob, now: now) } == .notOwner(owner: "alice"))
        #expect(await Self.refusal { _ = try await store.revokeLock("L", in: room, from: "bob", now: now) } == .notOwner(owner: "alice"))
        // A waiter that releases withdraws from the line.
        #expect(try await store.releaseLock("L", in: room, by: carol, now: now) == [.waitEnded(carol.session, room, lockName: "L", .withdrawn)])
        #expect(try await store.revokeLock("L", in: room, from: "alice", now: now) == [.event(room, .lockReleased, Self.detail("alice", token: token))])
        #expect(await Self.refusal { _ = try await store.revokeLock("X", in: room, from: "alice", now: now) } == .notExist)
        #expect(await Self.refusal { _ = try await store.releaseLock("X", in: room, by: alice, now: now) } == .notExist)
    }

    private func removeEndsTheWaits(_ store: any LockStore) async throws {
        let (room, alice, bob, carol, now) = (Self.room, Self.alice, Self.bob, Self.carol, Self.start)
        _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
        let token = try #require(Self.token(try await store.acquireLock("L", in: room, by: alice, wait: false, now: now).0))
        _ = try await store.acquireLock("L", in: room, by: bob, wait: true, now: now)
        _ = try await store.acquireLock("L", in: room, by: carol, wait: true, now: now)
        #expect(
            try await store.removeLock("L", in: room) == [
                .event(room, .lockRemoved, Self.detail("alice", token: token)),
                .waitEnded(bob.session, room, lockName: "L", .lockRemoved),
                .waitEnded(carol.session, room, lockName: "L", .lockRemoved),
            ])
        #expect(await Self.refusal { _ = try await store.removeLock("L", in: room) } == .notExist)
        #expect(try await store.locks(in: room) == [])
        // Nothing of the removed lock stays with its owner or waiters.
        #expect(try await store.sessionEnded(alice.session, now: now) == [])
        #expect(try await store.sessionLeft(bob.session, channel: room, now: now) == [])
        #expect(try await store.counts(in: nil) == LockCounts())
    }

    private func ttlHandsOver(_ store: any LockStore) async throws {
        let (room, alice, bob, carol, start) = (Self.room, Self.alice, Self.bob, Self.carol, Self.start)
        _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
        let first = try #require(Self.token(try await store.acquireLock("L", in: room, by: alice, wait: false, now: start).0))
        _ = try await store.acquireLock("L", in: room, by: bob, wait: true, now: start)
        try await store.sessionSuspended(alice.session, now: start)
        #expect(try await store.expire(now: start + .seconds(9)) == [])
        // Back in time: the countdown stops.
        try await store.sessionResumed(alice.session)
        #expect(try await store.expire(now: start + .seconds(60)) == [])
        try await store.sessionSuspended(alice.session, now: start + .seconds(60))
        #expect(try await store.expire(now: start + .seconds(69)) == [])
        let expired = try await store.expire(now: start + .seconds(70))
        guard expired.count == 3, case .granted(bob.session, room, "L", let second) = expired[2] else {
            Issue.record("not a hand-over to bob: \(expired)")
            return
        }
        #expect(
            expired == [
                .event(room, .lockReleased, Self.detail("alice", token: first)),
                .event(room, .lockAcquired, Self.detail("bob", token: second)),
                .granted(bob.session, room, lockName: "L", fencingToken: second),
            ])
        #expect(try await store.expire(now: start + .seconds(100)) == [])
        // A lock given to a session whose connection is lost counts down from the grant.
        try await store.sessionSuspended(carol.session, now: start + .seconds(100))
        _ = try await store.acquireLock("L", in: room, by: carol, wait: true, now: start + .seconds(100))
        let handed = try await store.releaseLock("L", in: room, by: bob, now: start + .seconds(105))
        guard case .granted(carol.session, room, "L", let third)? = handed.last else {
            Issue.record("not a hand-over to carol: \(handed)")
            return
        }
        #expect(try await store.expire(now: start + .seconds(114)) == [])
        #expect(try await store.expire(now: start + .seconds(115)) == [.event(room, .lockReleased, Self.detail("carol", token: third))])
    }

    private func leavingAndEnding(_ store: any LockStore) async throws {
        let (room, alice, bob, carol, now) = (Self.room, Self.alice, Self.bob, Self.carol, Self.start)
        for name in ["L", "M"] { _ = try await store.setLock(name, in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max) }
        let l = try #require(Self.token(try await store.acquireLock("L", in: room, by: alice, wait: false, now: now).0))
        let m = try #require(Self.token(try await store.acquireLock("M", in: room, by: bob, wait: false, now: now).0))
        _ = try await store.acquireLock("M", in: room, by: alice, wait: true, now: now)
        _ = try await store.acquireLock("L", in: room, by: carol, wait: true, now: now)
        // Alice leaves: her wait for M ends, her L goes to carol.
        let left = try await store.sessionLeft(alice.session, channel: room, now: now)
        guard left.count == 4, case .granted(carol.session, room, "L", let carols) = left[3] else {
            Issue.record("not a leave that hands L to carol: \(left)")
            return
        }
        #expect(
            left == [
                .waitEnded(alice.session, room, lockName: "M", .leftChannel),
                .event(room, .lockReleased, Self.detail("alice", token: l)),
                .event(room, .lockAcquired, Self.detail("carol", token: carols)),
                .granted(carol.session, room, lockName: "L", fencingToken: carols),
            ])
        // Bob ends while waiting for L: he leaves the line without a word, and M is released.
        _ = try await store.acquireLock("L", in: room, by: bob, wait: true, now: now)
        #expect(try await store.sessionEnded(bob.session, now: now) == [.event(room, .lockReleased, Self.detail("bob", token: m, name: "M"))])
        #expect(try await store.releaseLock("L", in: room, by: carol, now: now) == [.event(room, .lockReleased, Self.detail("carol", token: carols))])
        #expect(try await store.counts(in: "app") == LockCounts(locks: 2, held: 0, waiters: 0))
    }

    private func channelsAndAppsNeverMeet(_ store: any LockStore) async throws {
        let now = Self.start
        let channels = [
            ChannelKey(app: "app", .message, "room"), ChannelKey(app: "app", .stream, "room"),
            ChannelKey(app: "other", .message, "room"), ChannelKey(app: "app", .message, "room:2"),
        ]
        for channel in channels { _ = try await store.setLock("L", in: channel, ttl: 10, maxLocks: 1, maxLocksInApp: .max) }
        for (offset, channel) in channels.enumerated() {
            let caller = Caller(app: channel.app, userId: "user\(offset)", session: SessionID(UInt64(offset + 1)))
            _ = try await store.acquireLock("L", in: channel, by: caller, wait: false, now: now)
        }
        for (offset, channel) in channels.enumerated() {
            #expect(try await store.locks(in: channel).map(\.owner) == ["user\(offset)"])
        }
        #expect(try await store.counts(in: "other") == LockCounts(locks: 1, held: 1, waiters: 0))
        #expect(try await store.counts(in: "app") == LockCounts(locks: 3, held: 3, waiters: 0))
    }
}
