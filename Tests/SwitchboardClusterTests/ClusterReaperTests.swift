import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit

/// Nodes in one process on a real redis-server, one of which dies without ending its sessions:
/// the others reap it (`DeadNodes`). Its lock's owner keeps the lock for its ttl from the dead
/// node's last beat, then the next in line gets it; its sessions' session-bound metadata items go;
/// it leaves its users' online sets; and a node that was only paused, once it wakes, finds itself
/// reaped, is refused its sessions' lock calls, and ends them.
@Suite(.timeLimit(.minutes(3))) struct ClusterReaperTests {
    let room = ChannelKey(app: "app", .message, "room")
    let lock = LockAddress(.message, "room", "L")
    /// The wall-clock millisecond every node's `ManualClock` starts at.
    let origin: UInt64 = 1_700_000_000_000

    /// Logs `user` in on `node` and subscribes it to the room with `features`.
    func member(_ user: String, on node: ClusterNode, features: RtmSubscribeChannelFeature = [.lock, .metadata]) async throws -> Caller {
        let caller = try await node.logIn(user)
        _ = try await node.harness.bus.request(Subscribe(caller: caller, channelName: "room", features: features))
        return caller
    }

    /// Nodes `names` (a first) with locks and metadata; alice on a holds the lock (ttl 10 s) and has
    /// a session-bound item in the room's metadata, bob on b waits for the lock; every node beat
    /// once, at one second.
    func aliceHoldsBobWaits(_ names: [String], on redis: RedisServer) async throws -> (nodes: [ClusterNode], alice: Caller, bob: Caller) {
        var nodes: [ClusterNode] = []
        for name in names { nodes.append(try await ClusterNode.start(name, on: redis, storage: true, locks: true)) }
        let (a, b) = (nodes[0], nodes[1])
        let alice = try await member("alice", on: a)
        let bob = try await member("bob", on: b)
        #expect(await eventually { a.lockEvents(to: alice).count == 1 && b.lockEvents(to: bob).count == 1 })
        #expect(await eventually { b.storageEvents(to: bob).count == 1 })
        _ = try await a.harness.bus.request(SetLock(caller: alice, lock: lock, ttl: 10))
        _ = try await a.harness.bus.request(AcquireLock(caller: alice, lock: lock, retry: false))
        #expect(try await b.harness.bus.request(AcquireLock(caller: bob, lock: lock, retry: true)) == .queued)
        let items = [MetadataItem(key: "seat", value: "3", lease: .session), MetadataItem(key: "name", value: "x")]
        _ = try await a.harness.bus.request(
            SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: Metadata(items: items)))
        #expect(await eventually { b.storageEvents(to: bob).count == 2 })
        try await advance(nodes, by: 1)
        try await redis.withClient { client in
            #expect(await eventuallyAsync { try await liveRecords(client) == Set(names) })
        }
        return (nodes, alice, bob)
    }

    func liveRecords(_ client: RedisClient) async throws -> Set<String> {
        Set(try await client.send(["ZRANGE", "sb:nodes", "0", "-1"]).elements?.compactMap(\.string) ?? [])
    }

    func reaped(_ client: RedisClient) async throws -> Set<String> {
        Set(try await client.send(["ZRANGE", DeadNodes.reapedKey, "0", "-1"]).elements?.compactMap(\.string) ?? [])
    }

    func online(_ user: String, _ client: RedisClient) async throws -> Set<String> {
        Set(try await client.send(["SMEMBERS", "sb:ou:{app:\(user)}"]).elements?.compactMap(\.string) ?? [])
    }

    @Test func aDeadNodesLockGoesToTheNextInLineAtItsTtlFromTheLastBeatAndItsSessionsItemsAndListingsGo() async throws {
        try await RedisServer.with { redis in
            let (nodes, alice, bob) = try await aliceHoldsBobWaits(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            try await redis.withClient { client in
                #expect(try await online("alice", client) == ["a"])
                // Node a dies at 1 s, right after its beat: nothing of it ends its sessions.
                await a.stop()
                // Its record expires at 4 s; the beat after, node b reaps it.
                try await advance([b], by: 3)
                #expect(try await reaped(client).isEmpty)
                try await advance([b], by: 1)
                #expect(
                    await eventuallyAsync {
                        let (marked, live) = (try await reaped(client), try await liveRecords(client))
                        return marked == ["a"] && live == ["b"]
                    })
                #expect(await eventuallyAsync { try await online("alice", client).isEmpty })
                // Alice's session-bound item stays while another node may take her session over.
                // Her lock counts down from node a's last beat (1 s) for its ttl.
                let countdown = LockKeys(room).tag + "\nL"
                let deadline = String(origin + 1_000 + 10_000)
                let due = try await client.send(["ZRANGEBYSCORE", "sb:lk:countdowns", deadline, deadline])
                #expect(due.elements?.compactMap(\.string) == [countdown])
            }
            // Until then bob waits; at 11 s he gets it, and hears the hand-over.
            try await advance([b], by: 5)
            try await Task.sleep(for: .milliseconds(200))
            #expect(b.grants(to: bob).isEmpty)
            #expect(b.lockEvents(to: bob).last?.locks.first?.owner == "alice")
            try await advance([b], by: 1)
            #expect(await eventually { b.grants(to: bob).count == 1 })
            #expect(await eventually { b.lockEvents(to: bob).suffix(2).map(\.eventType) == [.lockReleased, .lockAcquired] })
            #expect(b.lockEvents(to: bob).last?.locks.first?.owner == "bob")
            // Nothing else was heard: no release when the node was reaped, one at the hand-over.
            #expect(
                b.lockEvents(to: bob).map(\.eventType) == [.snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired],
                "\(b.lockEvents(to: bob))")
            #expect(b.storageEvents(to: bob).count == 2)
            // Her presence timeout (300 s) from the last beat runs out untaken: her item goes, and
            // bob on b hears it.
            try await advance([b], by: 290)
            #expect(await eventually { b.storageEvents(to: bob).count == 3 })
            #expect(b.storageEvents(to: bob).last?.data.items.map(\.key) == ["name"])
            // Her end tells the lock's members nothing more: she held it no longer (bob, who sent no
            // heartbeat meanwhile, may have lost his connection and, after its ttl, the lock).
            #expect(b.lockEvents(to: bob).dropFirst(5).allSatisfy { $0.locks.first?.owner != "alice" }, "\(b.lockEvents(to: bob))")
            _ = alice
            await b.stop()
        }
    }

    /// Runs every reaping step of each of `nodes` for dead node `node`, all at once.
    func reapAtOnce(_ node: String, by nodes: [ClusterNode], lastBeat: WallClockTime) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for reaper in nodes {
                for step in reaper.deadNodeSteps {
                    group.addTask { _ = try await step.reapSessions(ofNode: node, lastBeat: lastBeat) }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func twoReapersAtOnceHandEachLockOverOnce() async throws {
        try await RedisServer.with { redis in
            let (nodes, alice, bob) = try await aliceHoldsBobWaits(["a", "b", "c"], on: redis)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            let carol = try await member("carol", on: c)
            #expect(await eventually { c.lockEvents(to: carol).count == 1 })
            await a.stop()
            // Nodes b and c both see node a dead, and both reap it: through their passes (one
            // holds the lease at a time), and through every step run by both at once.
            try await advance([b, c], by: 4)
            try await redis.withClient { client in
                #expect(await eventuallyAsync { try await reaped(client) == ["a"] })
            }
            let lastBeat = WallClockTime(millisecondsSince1970: origin + 1_000)
            try await reapAtOnce("a", by: [b, c], lastBeat: lastBeat)
            try await advance([b, c], by: 7)
            #expect(await eventually { b.grants(to: bob).count == 1 })
            #expect(await eventually { c.lockEvents(to: carol).suffix(2).map(\.eventType) == [.lockReleased, .lockAcquired] })
            // Late reapers (after the hand-over) change nothing: bob keeps the lock past a ttl.
            try await reapAtOnce("a", by: [b, c], lastBeat: lastBeat)
            try await advance([b, c], by: 12)
            try await Task.sleep(for: .milliseconds(200))
            // Once each: one grant, one release and one acquisition heard by each member, one
            // removal of alice's item.
            #expect(b.grants(to: bob).count == 1)
            #expect(try await c.harness.bus.request(GetLocks(caller: carol, channel: ChannelAddress(.message, "room"))).map(\.owner) == ["bob"])
            for (node, caller) in [(b, bob), (c, carol)] {
                let events = node.lockEvents(to: caller)
                #expect(events.filter { $0.eventType == .lockReleased }.count == 1, "\(events)")
                #expect(events.filter { $0.eventType == .lockAcquired && $0.locks.first?.owner == "bob" }.count == 1, "\(events)")
            }
            // Alice's session waits for a take-over until her presence timeout: then her item
            // goes, once, though both nodes look for what is due and both end it again.
            #expect(b.storageEvents(to: bob).count == 2)
            try await advance([b, c], by: 280)
            #expect(await eventually { b.storageEvents(to: bob).count == 3 })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for step in b.deadNodeSteps + c.deadNodeSteps {
                    group.addTask { try await step.endOrphan(alice.session, ofNode: "a") }
                }
                try await group.waitForAll()
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(b.storageEvents(to: bob).count == 3)
            await b.stop()
            await c.stop()
        }
    }

    @Test func anOutageOfRedisLongerThanARecordsLifeReapsNobody() async throws {
        try await RedisServer.with(["--appendonly", "yes", "--appendfsync", "always"]) { redis in
            let (nodes, alice, bob) = try await aliceHoldsBobWaits(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            try await advance(nodes, by: 4)
            // Redis goes away for five seconds: both records expire meanwhile, in Redis's file.
            try await redis.kill()
            try await advance(nodes, by: 5)
            try await redis.start()
            #expect(await eventually(within: .seconds(20)) { a.link.isConnected && b.link.isConnected })
            // Node a beats first after the outage: node b's record is still the expired one.
            try await advance([a], by: 1)
            try await Task.sleep(for: .milliseconds(300))
            try await advance(nodes, by: 6)
            try await redis.withClient { client in
                #expect(try await reaped(client).isEmpty)
                let live = try await liveRecords(client)
                #expect(live == ["a", "b"])
            }
            #expect(!a.harness.outbox.calls.contains(.disconnect(alice.session, .kickedOutByServer)))
            #expect(!b.harness.outbox.calls.contains(.disconnect(bob.session, .kickedOutByServer)))
            await a.stop()
            await b.stop()
        }
    }

    @Test func aPausedNodeThatWakesReapedIsRefusedItsSessionsLockCallsAndEndsThem() async throws {
        try await RedisServer.with { redis in
            let (nodes, alice, bob) = try await aliceHoldsBobWaits(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            // Node a's time stands still (paused) while node b's goes on: b reaps it.
            try await advance([b], by: 4)
            try await redis.withClient { client in
                #expect(
                    await eventuallyAsync {
                        let (marked, listed) = (try await reaped(client), try await online("alice", client))
                        return marked == ["a"] && listed.isEmpty
                    })
            }
            // Alice still seems to hold the lock, but her calls are refused: it is no longer hers.
            await #expect(throws: RtmError.self) {
                _ = try await a.harness.bus.request(ReleaseLock(caller: alice, lock: lock))
            }
            let other = LockAddress(.message, "room", "M")
            _ = try await b.harness.bus.request(SetLock(caller: bob, lock: other, ttl: 10))
            await #expect(throws: RtmError.self) {
                _ = try await a.harness.bus.request(AcquireLock(caller: alice, lock: other, retry: false))
            }
            do {
                _ = try await a.harness.bus.request(
                    SetChannelMetadata(
                        caller: alice, channelType: .message, channelName: "room",
                        data: Metadata(items: [MetadataItem(key: "k", value: "v")]), lockName: "L"))
                Issue.record("a write under the lock by a reaped session was taken")
            } catch {
                #expect((error as? RtmError)?.code == .storageLockNotAcquired, "\(error)")
            }
            #expect(b.grants(to: bob).isEmpty)
            // Node a wakes (its clock catches up): its beat finds it reaped; alice's session ends,
            // and node a is a live node again.
            try await advance([a], by: 4)
            #expect(await eventually { a.harness.outbox.calls.contains(.disconnect(alice.session, .kickedOutByServer)) })
            try await redis.withClient { client in
                #expect(
                    await eventuallyAsync {
                        let (marked, live) = (try await reaped(client), try await liveRecords(client))
                        return marked.isEmpty && live == ["a", "b"]
                    })
            }
            // Her session's end gave the lock to bob.
            #expect(await eventually { b.grants(to: bob).count == 1 })
            // A new login on node a is listed online and may take locks.
            let dave = try await member("dave", on: a)
            try await redis.withClient { client in
                let listed = try await online("dave", client)
                #expect(listed == ["a"])
            }
            guard case .acquired = try await a.harness.bus.request(AcquireLock(caller: dave, lock: other, retry: false)) else {
                Issue.record("dave did not get the free lock")
                return
            }
            await a.stop()
            await b.stop()
        }
    }
}
