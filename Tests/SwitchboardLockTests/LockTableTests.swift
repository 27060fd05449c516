import Testing
import SwitchboardCore
@testable import SwitchboardLock

/// The pure lock state: refusals, fencing tokens, the fair line, ttl countdowns, sessions leaving.
@Suite(.timeLimit(.minutes(2))) struct LockTableTests {
    let room = ChannelKey(app: "app", .message, "room")
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))
    /// The wall-clock time the tests' countdowns start from.
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    func refusal(_ body: () throws -> Void) -> LockRefusal? {
        do {
            try body()
            return nil
        } catch {
            return error as? LockRefusal
        }
    }

    func detail(_ owner: String = "", ttl: Int = 10, token: UInt64 = 0, name: String = "L") -> LockDetail {
        LockDetail(lockName: name, owner: owner, ttl: ttl, fencingToken: token)
    }

    func table(locks: [String] = ["L"], ttl: Int = 10) throws -> LockTable {
        var table = LockTable()
        for name in locks { _ = try table.set(name, in: room, ttl: ttl, maxLocks: 32) }
        return table
    }

    @Test func setRefusesATakenNameAndAFullChannel() throws {
        var table = LockTable()
        #expect(try table.set("L", in: room, ttl: 30, maxLocks: 2) == [.event(room, .lockSet, detail(ttl: 30))])
        #expect(refusal { _ = try table.set("L", in: room, ttl: 30, maxLocks: 2) } == .alreadyExists)
        _ = try table.set("M", in: room, ttl: 30, maxLocks: 2)
        #expect(refusal { _ = try table.set("N", in: room, ttl: 30, maxLocks: 2) } == .tooManyLocks(limit: 2))
        // Another channel, another app: counted apart.
        _ = try table.set("N", in: ChannelKey(app: "app", .stream, "room"), ttl: 30, maxLocks: 2)
        _ = try table.set("N", in: ChannelKey(app: "other", .message, "room"), ttl: 30, maxLocks: 2)
        #expect(table.locks(in: room).map(\.lockName) == ["L", "M"])
    }

    @Test func setRefusesAnAppWithItsMaximumOfLocksOverAllItsChannels() throws {
        var table = LockTable()
        let hall = ChannelKey(app: "app", .stream, "hall")
        _ = try table.set("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: 3)
        _ = try table.set("M", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: 3)
        _ = try table.set("L", in: hall, ttl: 10, maxLocks: 32, maxLocksInApp: 3)
        #expect(refusal { _ = try table.set("N", in: hall, ttl: 10, maxLocks: 32, maxLocksInApp: 3) } == .tooManyLocksInApp(limit: 3))
        #expect(table.count(in: "app") == 3)
        // Another app counts its own.
        _ = try table.set("N", in: ChannelKey(app: "other", .stream, "hall"), ttl: 10, maxLocks: 32, maxLocksInApp: 3)
        #expect(table.count(in: "other") == 1)
        // A removed lock makes room.
        _ = try table.remove("M", in: room)
        #expect(table.count(in: "app") == 2)
        _ = try table.set("N", in: hall, ttl: 10, maxLocks: 32, maxLocksInApp: 3)
        #expect(table.locks(in: hall).map(\.lockName) == ["L", "N"])
    }

    @Test func everyAcquisitionGetsALargerFencingToken() throws {
        var table = try table()
        let (first, effects) = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        #expect(first == .acquired(fencingToken: 1))
        #expect(effects == [.event(room, .lockAcquired, detail("alice", token: 1))])
        // Acquiring a lock one holds changes nothing.
        #expect(try table.acquire("L", in: room, by: alice, wait: true, now: start) == (.acquired(fencingToken: 1), []))
        _ = try table.release("L", in: room, by: alice, now: start)
        #expect(try table.acquire("L", in: room, by: bob, wait: false, now: start).0 == .acquired(fencingToken: 2))
        // Removed and set again, the name keeps counting up.
        _ = try table.remove("L", in: room)
        _ = try table.set("L", in: room, ttl: 10, maxLocks: 32)
        #expect(try table.acquire("L", in: room, by: alice, wait: false, now: start).0 == .acquired(fencingToken: 3))
        #expect(try table.holder(of: "L", in: room) == LockHolding(session: alice.session, userId: "alice", fencingToken: 3))
    }

    @Test func aHeldLockIsRefusedOrWaitedForFirstComeFirstServed() throws {
        var table = try table()
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        #expect(refusal { _ = try table.acquire("L", in: room, by: bob, wait: false, now: start) } == .heldByOther(owner: "alice"))
        #expect(try table.acquire("L", in: room, by: bob, wait: true, now: start) == (.queued, []))
        #expect(try table.acquire("L", in: room, by: carol, wait: true, now: start) == (.queued, []))
        #expect(refusal { _ = try table.acquire("L", in: room, by: bob, wait: true, now: start) } == .alreadyWaiting)
        #expect(table.lineLength(of: "L", in: room) == 2)
        #expect(try table.release("L", in: room, by: alice, now: start) == [
            .event(room, .lockReleased, detail("alice", token: 1)),
            .event(room, .lockAcquired, detail("bob", token: 2)),
            .granted(bob.session, room, lockName: "L", fencingToken: 2),
        ])
        #expect(try table.release("L", in: room, by: bob, now: start).last == .granted(carol.session, room, lockName: "L", fencingToken: 3))
        #expect(try table.release("L", in: room, by: carol, now: start) == [.event(room, .lockReleased, detail("carol", token: 3))])
        #expect(table.locks(in: room) == [detail()])
    }

    @Test func releaseByAWaiterWithdrawsItAndByAStrangerIsRefused() throws {
        var table = try table()
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: room, by: bob, wait: true, now: start)
        #expect(try table.release("L", in: room, by: bob, now: start) == [.waitEnded(bob.session, room, lockName: "L", .withdrawn)])
        #expect(refusal { _ = try table.release("L", in: room, by: bob, now: start) } == .notOwner(owner: "alice"))
        #expect(refusal { _ = try table.release("nope", in: room, by: bob, now: start) } == .notExist)
        _ = try table.release("L", in: room, by: alice, now: start)
        #expect(refusal { _ = try table.release("L", in: room, by: alice, now: start) } == .notOwner(owner: ""))
    }

    @Test func revokeTakesTheLockFromTheNamedOwnerOnly() throws {
        var table = try table()
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: room, by: bob, wait: true, now: start)
        #expect(refusal { _ = try table.revoke("L", in: room, from: "bob", now: start) } == .notOwner(owner: "alice"))
        let effects = try table.revoke("L", in: room, from: "alice", now: start)
        #expect(effects.first == .event(room, .lockReleased, detail("alice", token: 1)))
        #expect(effects.last == .granted(bob.session, room, lockName: "L", fencingToken: 2))
    }

    @Test func removingALockEndsItsWaits() throws {
        var table = try table()
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: room, by: bob, wait: true, now: start)
        #expect(try table.remove("L", in: room) == [
            .event(room, .lockRemoved, detail("alice", token: 1)),
            .waitEnded(bob.session, room, lockName: "L", .lockRemoved),
        ])
        #expect(refusal { _ = try table.remove("L", in: room) } == .notExist)
        #expect(refusal { _ = try table.holder(of: "L", in: room) } == .notExist)
        // Nothing of the removed lock is left behind for its owner or waiter.
        #expect(table.end(alice.session, now: start).isEmpty)
        #expect(table.end(bob.session, now: start).isEmpty)
    }

    @Test func aLostOwnerKeepsTheLockForItsTTLThenTheNextGetsIt() throws {
        var table = try table(ttl: 10)
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: room, by: bob, wait: true, now: start)
        table.suspend(alice.session, now: start + .seconds(5))
        #expect(table.expire(now: start + .seconds(14.999)).isEmpty)
        #expect(table.expire(now: start + .seconds(15)) == [
            .event(room, .lockReleased, detail("alice", token: 1)),
            .event(room, .lockAcquired, detail("bob", token: 2)),
            .granted(bob.session, room, lockName: "L", fencingToken: 2),
        ])
        #expect(table.expire(now: start + .seconds(100)).isEmpty)
    }

    @Test func anOwnerBackInTimeKeepsTheLock() throws {
        var table = try table(ttl: 10)
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        table.suspend(alice.session, now: start)
        table.resume(alice.session)
        #expect(table.expire(now: start + .seconds(60)).isEmpty)
        // Lost again later: a new countdown from then.
        table.suspend(alice.session, now: start + .seconds(60))
        #expect(table.expire(now: start + .seconds(69)).isEmpty)
        #expect(table.expire(now: start + .seconds(70)).first == .event(room, .lockReleased, detail("alice", token: 1)))
    }

    @Test func aWaiterThatIsAwayWhenItsTurnComesHasItsTTLToComeBack() throws {
        var table = try table(ttl: 10)
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: room, by: bob, wait: true, now: start)
        _ = try table.acquire("L", in: room, by: carol, wait: true, now: start)
        table.suspend(bob.session, now: start + .seconds(1))
        _ = try table.release("L", in: room, by: alice, now: start + .seconds(2))
        #expect(try table.holder(of: "L", in: room)?.userId == "bob")
        #expect(table.expire(now: start + .seconds(12)).last == .granted(carol.session, room, lockName: "L", fencingToken: 3))
    }

    @Test func anEndedSessionGivesBackAtOnceAndLeavesEveryLine() throws {
        var table = try table(locks: ["L", "M"])
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("M", in: room, by: bob, wait: false, now: start)
        _ = try table.acquire("M", in: room, by: alice, wait: true, now: start)
        _ = try table.acquire("L", in: room, by: carol, wait: true, now: start)
        #expect(table.end(alice.session, now: start) == [
            .event(room, .lockReleased, detail("alice", token: 1)),
            .event(room, .lockAcquired, detail("carol", token: 3)),
            .granted(carol.session, room, lockName: "L", fencingToken: 3),
        ])
        #expect(table.lineLength(of: "M", in: room) == 0)
        // A session that timed out releases its locks the same way (the reference's lockReleased).
        table.suspend(carol.session, now: start)
        #expect(table.end(carol.session, now: start + .seconds(3)) == [.event(room, .lockReleased, detail("carol", token: 3))])
    }

    @Test func leavingAChannelReleasesAndEndsWaitsThereOnly() throws {
        var table = try table()
        let hall = ChannelKey(app: "app", .stream, "room")
        _ = try table.set("L", in: hall, ttl: 10, maxLocks: 32)
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: hall, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: room, by: bob, wait: true, now: start)
        _ = try table.acquire("L", in: hall, by: bob, wait: true, now: start)
        #expect(table.leave(bob.session, channel: room, now: start) == [
            .waitEnded(bob.session, room, lockName: "L", .leftChannel)
        ])
        #expect(table.leave(alice.session, channel: room, now: start) == [
            .event(room, .lockReleased, detail("alice", token: 1))
        ])
        #expect(try table.holder(of: "L", in: hall)?.userId == "alice")
        #expect(table.lineLength(of: "L", in: hall) == 1)
    }

    @Test func appsNeverShareLocks() throws {
        var table = LockTable()
        let otherRoom = ChannelKey(app: "other", .message, "room")
        let otherAlice = Caller(app: "other", userId: "alice", session: SessionID(9))
        _ = try table.set("L", in: room, ttl: 10, maxLocks: 32)
        #expect(refusal { _ = try table.acquire("L", in: otherRoom, by: otherAlice, wait: false, now: start) } == .notExist)
        _ = try table.set("L", in: otherRoom, ttl: 10, maxLocks: 32)
        _ = try table.acquire("L", in: room, by: alice, wait: false, now: start)
        _ = try table.acquire("L", in: otherRoom, by: otherAlice, wait: false, now: start)
        #expect(refusal { _ = try table.revoke("L", in: otherRoom, from: "bob", now: start) } == .notOwner(owner: "alice"))
        _ = table.end(alice.session, now: start)
        #expect(try table.holder(of: "L", in: otherRoom)?.session == otherAlice.session)
        #expect(try table.holder(of: "L", in: room) == nil)
    }
}
