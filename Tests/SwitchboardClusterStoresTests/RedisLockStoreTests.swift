import Testing
import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardLock
import SwitchboardLockContract
import SwitchboardRedis
import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardTestKit
import SwitchboardTransport

/// The Redis lock store on a redis-server of each test's own: the contract every lock store
/// keeps, and what only a store shared by nodes has.
@Suite(.timeLimit(.minutes(3))) struct RedisLockStoreTests {
    let room = ChannelKey(app: "app", .message, "room")
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    @Test(arguments: LockStoreContract.allCases) func theStoreKeepsTheContract(scenario: LockStoreContract) async throws {
        try await RedisServer.with { redis in
            let store = try await redis.lockStore()
            try await scenario.run(on: store)
            await store.close()
        }
    }

    @Test func sessionsAreEachNodesOwnAndGrantsGoToTheirNode() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.lockStore(node: "node-a")
            let b = try await redis.lockStore(node: "node-b")
            // Both nodes have a session 1: two sessions, two users.
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(1))
            _ = try await a.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
            let (first, _) = try await a.acquireLock("L", in: room, by: alice, wait: false, now: start)
            #expect(try await b.acquireLock("L", in: room, by: bob, wait: true, now: start) == (.queued, []))
            // Node b's session 1 is not the owner, though node a's session 1 is.
            let seenFromB = try #require(try await b.holder(of: "L", in: room))
            #expect(seenFromB.onAnotherNode && seenFromB.userId == "alice")
            #expect(try await a.holder(of: "L", in: room)?.onAnotherNode == false)
            #expect(await refusal { _ = try await b.releaseLock("L", in: room, by: bob, now: start) } == nil)  // bob withdraws
            #expect(try await b.acquireLock("L", in: room, by: bob, wait: true, now: start) == (.queued, []))
            // Alice releases on node a: the grant is node b's to tell, the events everyone's.
            let effects = try await a.releaseLock("L", in: room, by: alice, now: start)
            guard case .acquired(let firstToken) = first, effects.count == 2, case .event(_, .lockAcquired, let detail) = effects[1] else {
                Issue.record("\(effects)")
                return
            }
            #expect(effects[0] == .event(room, .lockReleased, LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: firstToken)))
            #expect(detail.owner == "bob" && detail.fencingToken > firstToken)
            // Node a's session 1 ends: bob, node b's session 1, keeps the lock.
            #expect(try await a.sessionEnded(SessionID(1), now: start) == [])
            #expect(try await b.holder(of: "L", in: room)?.userId == "bob")
            #expect(try await b.sessionEnded(SessionID(1), now: start).count == 1)
            await a.close()
            await b.close()
        }
    }

    @Test func eachChangeIsPublishedNumberedPerChannelAsTheNodesReadIt() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.lockStore(node: "node-a")
            let b = try await redis.lockStore(node: "node-b")
            let (subscriber, group, published) = try await redis.recordPublished(on: LockKeys(room).events)
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(7))
            var returned: [[LockEffect]] = []
            returned.append(try await a.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max))
            returned.append(try await a.acquireLock("L", in: room, by: alice, wait: false, now: start).1)
            _ = try await b.acquireLock("L", in: room, by: bob, wait: true, now: start)
            returned.append(try await a.releaseLock("L", in: room, by: alice, now: start))
            returned.append(try await b.removeLock("L", in: room))
            #expect(await eventually { published.values.count == 4 })
            let readByA = published.values.map { a.change(publishedAs: $0) }
            let readByB = published.values.map { b.change(publishedAs: $0) }
            #expect(readByA.map { $0?.sequence } == [1, 2, 3, 4])
            #expect(readByA.map { $0?.channel } == Array(repeating: room, count: 4))
            // Node a reads what its calls returned; node b reads the grant to its own session too.
            #expect(readByA.map { $0?.effects ?? [] } == returned)
            #expect(readByB[2]?.effects.last == .granted(bob.session, room, lockName: "L", fencingToken: 2))
            #expect(readByA[2]?.effects.count == 2)
            #expect(try await a.snapshot(of: room) == LockSnapshot(locks: [], sequence: 4))
            #expect(a.change(publishedAs: Array("garbage".utf8)) == nil)
            // What comes off pub/sub is read defensively: every cut of a real change is refused, and
            // random byte changes never crash the reader (some land in a name and still read).
            var generator = SeededGenerator(seed: 11)
            var read = 0
            for payload in published.values {
                for length in 0..<payload.count { #expect(a.change(publishedAs: Array(payload.prefix(length))) == nil) }
                for _ in 0..<200 {
                    var mutated = payload
                    mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                    if a.change(publishedAs: mutated) != nil { read += 1 }
                }
            }
            #expect(read > 0 && read < 800, "\(read) of 800 mutated changes read")
            await subscriber.close()
            await a.close()
            await b.close()
            try await BlockingWork.run { group.shutdown() }
        }
    }

    @Test func tokensGrowAcrossARestartOfRedisThatKeptItsFile() async throws {
        try await RedisServer.with(["--appendonly", "yes", "--appendfsync", "always"]) { redis in
            let store = try await redis.lockStore()
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            _ = try await store.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
            var last: UInt64 = 0
            for _ in 0..<3 {
                guard case .acquired(let token) = try await store.acquireLock("L", in: room, by: alice, wait: false, now: start).0 else {
                    Issue.record("not acquired")
                    return
                }
                #expect(token > last)
                last = token
                _ = try await store.releaseLock("L", in: room, by: alice, now: start)
            }
            try await redis.kill()
            try await redis.start()
            let store2 = try await redis.lockStore(node: "node-b")
            guard case .acquired(let after) = try await store2.acquireLock("L", in: room, by: alice, wait: false, now: start).0 else {
                Issue.record("not acquired after the restart")
                return
            }
            #expect(after > last)
            await store.close()
            await store2.close()
        }
    }

    @Test func openingLeavesWhatTheNodesLastRunHeldToTheReaper() async throws {
        try await RedisServer.with { redis in
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(1))
            let a = try await redis.lockStore(node: "node-a")
            let b = try await redis.lockStore(node: "node-b")
            _ = try await a.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
            _ = try await a.acquireLock("L", in: room, by: alice, wait: false, now: start)
            _ = try await b.acquireLock("L", in: room, by: bob, wait: true, now: start)
            await a.close()
            // Node a comes back (a restart): opening its store changes nothing; the cluster link
            // reaps the last run as a dead node's (ClusterLockTests), so the session may resume.
            let again = try await redis.lockStore(node: "node-a")
            #expect(try await b.holder(of: "L", in: room)?.userId == "alice")
            await again.close()
            await b.close()
        }
    }

    @Test func aReapedNodesSessionsLeaveTheLinesAndTheirLocksCountDownFromTheLastBeat() async throws {
        try await RedisServer.with { redis in
            // Node a's alice holds L and waits for M; carol, also on a, waits for L; bob on b holds M.
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let carol = Caller(app: "app", userId: "carol", session: SessionID(2))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(1))
            let a = try await redis.lockStore(node: "node-a")
            let b = try await redis.lockStore(node: "node-b")
            for name in ["L", "M"] { _ = try await a.setLock(name, in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max) }
            _ = try await a.acquireLock("L", in: room, by: alice, wait: false, now: start)
            _ = try await b.acquireLock("M", in: room, by: bob, wait: false, now: start)
            _ = try await a.acquireLock("M", in: room, by: alice, wait: true, now: start)
            _ = try await a.acquireLock("L", in: room, by: carol, wait: true, now: start)
            let lastBeat = start + .seconds(2)
            // Not marked reaped: nothing happens (the node came back, or was never dead).
            _ = try await b.reapSessions(ofNode: "node-a", lastBeat: lastBeat)
            #expect(try await a.snapshot(of: room).locks.map(\.owner) == ["alice", "bob"])
            #expect(try await redis.countdowns() == [])
            // Marked: node a's sessions leave every line at once, alice's lock counts down from
            // the last beat; twice (two reapers) is once.
            _ = try await redis.send(["ZADD", DeadNodes.reapedKey, "0", "node-a"])
            _ = try await b.reapSessions(ofNode: "node-a", lastBeat: lastBeat)
            _ = try await b.reapSessions(ofNode: "node-a", lastBeat: lastBeat + .seconds(5))
            #expect(try await redis.countdowns() == [String((lastBeat + .seconds(10)).millisecondsSince1970)])
            // Alice's calls are refused: the lock is no longer hers to release.
            #expect(await refusal { _ = try await a.releaseLock("L", in: room, by: alice, now: start) } == .notOwner(owner: "alice"))
            #expect(await refusal { _ = try await a.acquireLock("M", in: room, by: alice, wait: true, now: start) } == .notOwner(owner: "bob"))
            // Bob releases M: nobody of node a is in its line any more.
            _ = try await b.releaseLock("M", in: room, by: bob, now: start)
            #expect(try await b.snapshot(of: room).locks.map(\.owner) == ["alice", ""])
            // The sweep before the deadline leaves L; at it, L is free (carol left its line).
            #expect(try await b.expire(now: lastBeat + .seconds(9)) == [])
            let effects = try await b.expire(now: lastBeat + .seconds(10))
            #expect(effects.count == 1 && effects.first.map { if case .event(_, .lockReleased, _) = $0 { true } else { false } } == true)
            #expect(try await b.snapshot(of: room).locks.map(\.owner) == ["", ""])
            await a.close()
            await b.close()
        }
    }

    private func refusal(_ body: () async throws -> Void) async -> LockRefusal? {
        do {
            try await body()
            return nil
        } catch {
            return error as? LockRefusal
        }
    }
}

/// A metadata write under a lock, with the locks in the same Redis: checked in the write's script.
@Suite(.timeLimit(.minutes(2))) struct LockGatedMetadataInRedisTests {
    @Test func aWriteUnderALockIsCheckedWhereTheLockIs() async throws {
        try await RedisServer.with { redis in
            let room = ChannelKey(app: "app", .message, "room")
            let target = MetadataTarget.channel(room)
            let configuration = RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port))
            let locks = try await redis.lockStore(node: "node-a")
            let onA = RedisMetadataStore(configuration: configuration, nodeID: "node-a", locksInRedis: true)
            let onB = RedisMetadataStore(configuration: configuration, nodeID: "node-b", locksInRedis: true)
            try await onA.open()
            try await onB.open()
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let now = WallClockTime(millisecondsSince1970: 1_700_000_000_000)
            _ = try await locks.setLock("L", in: room, ttl: 10, maxLocks: 32, maxLocksInApp: .max)
            guard case .acquired(let token) = try await locks.acquireLock("L", in: room, by: alice, wait: false, now: now).0 else {
                Issue.record("not acquired")
                return
            }
            func write(_ store: RedisMetadataStore, _ fence: MetadataFence) async -> RtmErrorCode? {
                var write = MetadataWrite.set([("k", "v")])
                write.fence = fence
                do {
                    _ = try await store.write(write, to: target, limits: Limits())
                    return nil
                } catch {
                    return error.code
                }
            }
            // The holder's session on its node: taken, as often as it likes.
            #expect(await write(onA, MetadataFence(lockName: "L", token: token, session: alice.session)) == nil)
            #expect(await write(onA, MetadataFence(lockName: "L", token: token, session: alice.session)) == nil)
            // Session 1 of another node, another session of the holder's node, a stale token, no lock.
            #expect(await write(onB, MetadataFence(lockName: "L", token: token, session: alice.session)) == .storageLockNotAcquired)
            #expect(await write(onA, MetadataFence(lockName: "L", token: token, session: SessionID(2))) == .storageLockNotAcquired)
            #expect(await write(onA, MetadataFence(lockName: "L", token: token - 1, session: alice.session)) == .storageLockNotAcquired)
            #expect(await write(onA, MetadataFence(lockName: "M", token: token, session: alice.session)) == .storageInvalidLockName)
            // Released: nobody holds it, the write that was checked before is refused at commit.
            _ = try await locks.releaseLock("L", in: room, by: alice, now: now)
            #expect(await write(onA, MetadataFence(lockName: "L", token: token, session: alice.session)) == .storageLockNotAcquired)
            await onA.close()
            await onB.close()
            await locks.close()
        }
    }
}
