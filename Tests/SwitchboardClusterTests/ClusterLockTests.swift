import Synchronization
import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit

/// Nodes in one process, each with the lock module over the Redis lock store and the cluster
/// link, on a real redis-server: a channel's locks are one set for the whole cluster, their
/// events and grants reach members and waiters on every node, and a lock-gated metadata write is
/// checked where the lock is.
@Suite(.timeLimit(.minutes(3))) struct ClusterLockTests {
    let room = ChannelKey(app: "app", .message, "room")
    let lock = LockAddress(.message, "room", "L")

    func start(_ names: [String], on redis: RedisServer, storage: Bool = false) async throws -> [ClusterNode] {
        try await ClusterNode.start(names, on: redis, storage: storage, locks: true)
    }

    /// Logs `user` in on `node` and subscribes it to the room with `features`.
    func member(_ user: String, on node: ClusterNode, features: RtmSubscribeChannelFeature = [.lock]) async throws -> Caller {
        try await node.member(user, features: features)
    }

    /// Takes the lock for `caller` on `node`: at once, or by waiting for its grant.
    func take(_ caller: Caller, on node: ClusterNode) async throws -> UInt64 {
        let grantsBefore = node.grants(to: caller).count
        switch try await node.harness.bus.request(AcquireLock(caller: caller, lock: lock, retry: true)) {
        case .acquired(let token):
            return token
        case .queued:
            #expect(await eventually { node.grants(to: caller).count > grantsBefore }, "\(caller) was never granted the lock")
            return node.grants(to: caller)[grantsBefore]
        }
    }

    /// Nodes a and b, alice on a holding the lock (with `ttl`), bob on b waiting for it; both had
    /// their snapshot first, so every change after it reaches them through the relay.
    func aliceHoldsBobWaits(on redis: RedisServer, ttl: Int) async throws -> (a: ClusterNode, b: ClusterNode, alice: Caller, bob: Caller) {
        let nodes = try await start(["a", "b"], on: redis)
        let (a, b) = (nodes[0], nodes[1])
        let alice = try await member("alice", on: a)
        let bob = try await member("bob", on: b)
        #expect(await eventually { a.lockEvents(to: alice).count == 1 && b.lockEvents(to: bob).count == 1 })
        _ = try await a.harness.bus.request(SetLock(caller: alice, lock: lock, ttl: ttl))
        _ = try await a.harness.bus.request(AcquireLock(caller: alice, lock: lock, retry: false))
        #expect(try await b.harness.bus.request(AcquireLock(caller: bob, lock: lock, retry: true)) == .queued)
        return (a, b, alice, bob)
    }

    @Test func clientsOfThreeNodesTakeTurnsWithTokensThatOnlyGrow() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b", "c"], on: redis)
            var clients: [(ClusterNode, Caller)] = []
            for (offset, node) in nodes.enumerated() {
                for number in 0..<2 { clients.append((node, try await member("user\(offset)\(number)", on: node, features: [.message]))) }
            }
            _ = try await nodes[0].harness.bus.request(SetLock(caller: clients[0].1, lock: lock, ttl: 60))
            // The protected resource: one holder at a time, and every holder's token larger than
            // the last one it saw.
            let resource = FencedResource()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (node, caller) in clients {
                    group.addTask {
                        for _ in 0..<4 {
                            let token = try await take(caller, on: node)
                            resource.state.withLock { state in
                                if let holder = state.holder { state.violations.append("\(caller.userId) entered while \(holder) held it") }
                                if token <= state.lastToken { state.violations.append("token \(token) after \(state.lastToken)") }
                                state.holder = caller.userId
                                state.lastToken = token
                                state.entries += 1
                            }
                            await Task.yield()
                            resource.state.withLock { $0.holder = nil }
                            _ = try await node.harness.bus.request(ReleaseLock(caller: caller, lock: lock))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let outcome = resource.state.withLock { $0 }
            #expect(outcome.violations == [])
            #expect(outcome.entries == 24)
            for node in nodes { await node.stop() }
        }
    }

    @Test func membersOnEveryNodeHearEachChangeInOrderAndAWaiterIsGrantedAcrossNodes() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b", "c"], on: redis)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            let alice = try await member("alice", on: a)
            let bob = try await member("bob", on: b)
            let carol = try await member("carol", on: c, features: [.message])
            #expect(await eventually { a.lockEvents(to: alice).count == 1 && b.lockEvents(to: bob).count == 1 })
            _ = try await a.harness.bus.request(SetLock(caller: alice, lock: lock, ttl: 30))
            guard case .acquired(let first) = try await a.harness.bus.request(AcquireLock(caller: alice, lock: lock, retry: false)) else {
                Issue.record("alice did not get the free lock")
                return
            }
            // Of the same name on another node: the same lock.
            await #expect(throws: RtmError.self) {
                _ = try await c.harness.bus.request(AcquireLock(caller: carol, lock: lock, retry: false))
            }
            #expect(try await c.harness.bus.request(AcquireLock(caller: carol, lock: lock, retry: true)) == .queued)
            _ = try await a.harness.bus.request(ReleaseLock(caller: alice, lock: lock))
            #expect(await eventually { c.grants(to: carol).count == 1 })
            let second = c.grants(to: carol)[0]
            #expect(second > first)
            let expected: [(RtmLockEventType, String, UInt64)] = [
                (.snapshot, "", 0), (.lockSet, "", 0), (.lockAcquired, "alice", first), (.lockReleased, "alice", first),
                (.lockAcquired, "carol", second),
            ]
            for (node, caller) in [(a, alice), (b, bob)] {
                #expect(await eventually { node.lockEvents(to: caller).count == 5 }, "\(caller)")
                let events = node.lockEvents(to: caller)
                #expect(events.map(\.eventType) == expected.map { $0.0 }, "\(caller)")
                #expect(events.dropFirst().map { $0.locks.first?.owner ?? "-" } == expected.dropFirst().map { $0.1 }, "\(caller)")
                #expect(events.dropFirst().map { $0.locks.first?.fencingToken ?? 0 } == expected.dropFirst().map { $0.2 }, "\(caller)")
            }
            // A member joining later gets the cluster's locks as its snapshot.
            let dave = try await member("dave", on: b)
            #expect(await eventually { b.lockEvents(to: dave).count == 1 })
            #expect(b.lockEvents(to: dave)[0].locks == [LockDetail(lockName: "L", owner: "carol", ttl: 30, fencingToken: second)])
            let seenFromA = try await a.harness.bus.request(GetLocks(caller: alice, channel: ChannelAddress(.message, "room")))
            #expect(seenFromA.map(\.owner) == ["carol"])
            // Bob removes it on b: carol's node hears it; nothing more reaches anyone twice.
            _ = try await b.harness.bus.request(RemoveLock(caller: bob, lock: lock))
            #expect(await eventually { a.lockEvents(to: alice).count == 6 && b.lockEvents(to: dave).count == 2 })
            #expect(a.lockEvents(to: alice).last?.eventType == .lockRemoved)
            #expect(a.lockEvents(to: alice).count == 6 && b.lockEvents(to: bob).count == 6)
            for node in nodes { await node.stop() }
        }
    }

    @Test func aHolderWhoseConnectionIsLostKeepsTheLockForItsTtlThenTheNextInLineGetsIt() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await aliceHoldsBobWaits(on: redis, ttl: 10)
            let nodes = [a, b]
            // Alice's connection drops: her lock starts its ttl, in Redis's wall-clock terms.
            await a.harness.bus.publishAndWait(SessionDisconnected(session: alice.session))
            // Its deadline: the suspension's wall-clock time plus the ttl, the same for every node.
            let deadline = a.harness.clock.wallMilliseconds + 10_000
            let countdown = LockKeys(room).tag + "\nL"
            try await redis.withClient { client in
                #expect(
                    await eventuallyAsync {
                        let due = try await client.send(["ZRANGEBYSCORE", "sb:lk:countdowns", String(deadline), String(deadline)])
                        return due.elements?.compactMap(\.string) == [countdown]
                    })
            }
            #expect(b.grants(to: bob).isEmpty)
            for node in nodes { node.harness.clock.advance(by: .seconds(11)) }
            #expect(await eventually { b.grants(to: bob).count == 1 })
            #expect(await eventually { b.lockEvents(to: bob).suffix(2).map(\.eventType) == [.lockReleased, .lockAcquired] })
            for node in nodes { await node.stop() }
        }
    }

    @Test func aWaiterGrantedWhileItsNodeMissedTheChangeIsGrantedOnceTheLinkIsBack() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await aliceHoldsBobWaits(on: redis, ttl: 30)
            let nodes = [a, b]
            #expect(await eventually { b.lockEvents(to: bob).count == 3 })
            // The hand-over to bob as the script makes it, with nothing published: node b misses it.
            try await redis.withClient { client in
                _ = try await client.send([
                    "EVAL",
                    "redis.call('HSET', KEYS[1], 'L', cmsgpack.pack({30, 'b:' .. ARGV[1], 'bob', 99, {}})) return 1",
                    "1", String(decoding: LockKeys(room).locks, as: UTF8.self), String(bob.session.rawValue),
                ])
                #expect(b.grants(to: bob).isEmpty)
                _ = try await client.send(["CLIENT", "KILL", "TYPE", "pubsub"])
            }
            #expect(await eventually { b.grants(to: bob) == [99] })
            // Its members get the locks again, as they are now.
            #expect(await eventually { b.lockEvents(to: bob).last?.eventType == .snapshot })
            #expect(b.lockEvents(to: bob).last?.locks.map(\.owner) == ["bob"])
            for node in nodes { await node.stop() }
        }
    }

    @Test func aNodeStartedAgainLetsItsLastRunsLockCountDownItsTtl() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await aliceHoldsBobWaits(on: redis, ttl: 10)
            // Node a goes away without ending its sessions (a crash) and starts again under its
            // id before node b reaps it: the new run reaps its last one as a dead node's, so
            // alice's lock stays hers for its ttl from that run's last beat (her client may still
            // resume her session), then goes to the next in line.
            await a.stop()
            let again = try await ClusterNode.start("a", on: redis, locks: true)
            let held = try await b.harness.bus.request(GetLocks(caller: bob, channel: ChannelAddress(.message, "room")))
            #expect(held.map(\.owner) == ["alice"] && b.grants(to: bob).isEmpty)
            for _ in 0..<12 {
                b.harness.clock.advance(by: .seconds(1))
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(await eventually { b.grants(to: bob).count == 1 })
            await again.stop()
            await b.stop()
        }
    }

    @Test func aLockGatedMetadataWriteIsCheckedWhereTheLockIs() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis, storage: true)
            let (a, b) = (nodes[0], nodes[1])
            let alice = try await member("alice", on: a, features: [.message, .lock])
            let bob = try await member("bob", on: b, features: [.message, .lock])
            _ = try await a.harness.bus.request(SetLock(caller: alice, lock: lock, ttl: 30))
            guard case .acquired(let token) = try await b.harness.bus.request(AcquireLock(caller: bob, lock: lock, retry: false)) else {
                Issue.record("bob did not get the free lock")
                return
            }
            let data = Metadata(items: [MetadataItem(key: "k", value: "v")])
            // The holder, on b, writes under the lock.
            _ = try await b.harness.bus.request(
                SetChannelMetadata(caller: bob, channelType: .message, channelName: "room", data: data, lockName: "L"))
            _ = try await b.harness.bus.request(
                SetChannelMetadata(
                    caller: bob, channelType: .message, channelName: "room", data: data,
                    options: MetadataOptions(fencingToken: token), lockName: "L"))
            // Alice is session 1 on a, as bob is on b: not the holder, refused.
            do {
                _ = try await a.harness.bus.request(
                    SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: data, lockName: "L"))
                Issue.record("a write by a non-holder was taken")
            } catch {
                #expect((error as? RtmError)?.code == .storageLockNotAcquired, "\(error)")
            }
            do {
                _ = try await a.harness.bus.request(
                    SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: data, lockName: "M"))
                Issue.record("a write under no lock was taken")
            } catch {
                #expect((error as? RtmError)?.code == .storageInvalidLockName, "\(error)")
            }
            for node in nodes { await node.stop() }
        }
    }
}

/// What the clients of the turn-taking test protect: who is in, the last token seen, the turns
/// taken and every violation (two in at once, a token not larger than the last).
final class FencedResource: Sendable {
    struct State {
        var holder: String?
        var lastToken: UInt64 = 0
        var entries = 0
        var violations: [String] = []
    }
    let state = Mutex(State())
}
