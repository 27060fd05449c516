import Testing
import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit

/// A session moves to another node when its client reconnects there with its resume ticket:
/// nodes in one process, each with the session module, the message router, presence, storage,
/// locks and the cluster link over a real redis-server.
@Suite(.timeLimit(.minutes(3))) struct ClusterSessionTakeOverTests {
    let room = ChannelAddress(.message, "room")
    let lock = LockAddress(.message, "room", "L")

    func start(_ names: [String], on redis: RedisServer) async throws -> [ClusterNode] {
        try await ClusterNode.start(names, on: redis, storage: true, locks: true, presence: true)
    }

    /// The presence events `caller` got, as type and publisher.
    func heard(_ node: ClusterNode, _ caller: Caller) -> [String] {
        node.presenceEvents(to: caller).map { "\($0.type) \($0.publisher)" }
    }

    /// Logs `user` in on `node` and subscribes it to the room with every feature.
    func member(_ user: String, on node: ClusterNode) async throws -> LoginGranted {
        let grant = try await node.harness.bus.request(Login(appId: "app", userId: user, token: ""))
        _ = try await node.harness.bus.request(Subscribe(caller: grant.caller, channelName: "room", features: [.message, .presence, .lock, .metadata]))
        return grant
    }

    /// Logs `grant`'s user in on `node` with its resume ticket, having received `received` pushes.
    func resume(_ grant: LoginGranted, on node: ClusterNode, received: UInt64 = 0) async throws -> LoginGranted {
        let ticket = ResumeTicket(session: grant.session, secret: grant.ticket.secret, received: received)
        return try await node.harness.bus.request(Login(appId: "app", userId: grant.caller.userId, token: "", resume: ticket))
    }

    /// Nodes a and b, bob on b listening (his snapshot first, so what follows reaches him through
    /// the relay), then alice joining on a, which bob heard.
    func bobListensAliceJoins(on redis: RedisServer) async throws -> (nodes: [ClusterNode], bob: Caller, alice: LoginGranted) {
        let nodes = try await start(["a", "b"], on: redis)
        let bob = try await member("bob", on: nodes[1]).caller
        #expect(await eventually { heard(nodes[1], bob) == ["snapshot bob"] })
        let alice = try await member("alice", on: nodes[0])
        #expect(await eventually { heard(nodes[1], bob) == ["snapshot bob", "remoteJoinChannel alice"] })
        return (nodes, bob, alice)
    }

    @Test func aSessionResumedOnAnotherNodeKeepsItsChannelsStateAndLockAndNobodySeesItGo() async throws {
        try await RedisServer.with { redis in
            let (nodes, bob, aliceOnA) = try await bobListensAliceJoins(on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = aliceOnA.caller
            _ = try await a.harness.bus.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "mood", value: "calm")]))
            _ = try await a.harness.bus.request(SetLock(caller: alice, lock: lock, ttl: 30))
            _ = try await a.harness.bus.request(AcquireLock(caller: alice, lock: lock, retry: false))
            #expect(await eventually { heard(b, bob).count == 3 })
            // Session numbers name one session on every node: a's and b's do not meet.
            #expect(alice.session != bob.session)

            // Alice's connection to node a is lost; her client reconnects to node b.
            await a.harness.bus.publishAndWait(SessionDisconnected(session: alice.session))
            let resumed = try await resume(aliceOnA, on: b, received: 7)
            #expect(resumed.resumed)
            #expect(resumed.session == alice.session)
            #expect(resumed.takeOverLoss?.historyLost == true)
            #expect(resumed.takeOverLoss?.channels.contains(room) == true)

            // Node a, told, ends its copy: no session of alice is left there.
            let server = Caller.server(app: "app", userId: "server")
            #expect(await eventuallyAsync { try await a.harness.bus.request(ListUserSessions(caller: server, userId: "alice")).isEmpty })
            #expect(try await b.harness.bus.request(ListUserSessions(caller: server, userId: "alice")).map(\.session) == [alice.session])
            await #expect(throws: RtmError.self) { try await a.harness.bus.request(Heartbeat(caller: alice)) }

            // She is still in the room with her state, for both nodes; bob saw her neither leave nor come back.
            let caller = resumed.caller
            for node in [a, b] {
                #expect(try await node.harness.bus.request(WhoNow(caller: bob, channel: room, includeState: true)).users.contains(UserState(userId: "alice", states: ["mood": "calm"])))
            }
            #expect(try await b.harness.bus.request(WhereNow(caller: bob, userId: "alice")) == [room])
            // Messages of the room reach her on node b, from either node.
            try await b.publish(bob, .message, to: "room", "from b")
            let carol = try await a.logIn("carol")
            try await a.publish(carol, .message, to: "room", "from a")
            #expect(await eventually { b.messages(to: caller) == ["from b", "from a"] })
            // A message to her user channel from node a reaches node b.
            try await a.publish(carol, .user, to: "alice", "direct")
            #expect(await eventually { b.messages(to: caller).last == "direct" })
            // The lock is still hers, on node b: she releases it there, and bob can take it.
            _ = try await b.harness.bus.request(ReleaseLock(caller: caller, lock: lock))
            #expect(try await b.harness.bus.request(AcquireLock(caller: bob, lock: lock, retry: false)) != .queued)
            // The state she sets on node b is heard by bob.
            _ = try await b.harness.bus.request(SetPresenceState(caller: caller, channel: room, items: [StateItem(key: "mood", value: "busy")]))
            #expect(await eventually { heard(b, bob).last == "remoteStateChanged alice" })
            // Node a, had it not yet heard (paused, say), could not act for her under its name:
            // its presence store refuses her state and her joins.
            let presenceOfA = try #require(a.deadNodeSteps.compactMap { $0 as? RedisPresenceStore }.first)
            await #expect(throws: RtmError.self) {
                _ = try await presenceOfA.setState(
                    of: alice.user, in: ChannelKey(app: "app", .message, "room"), items: [StateItem(key: "mood", value: "stale")], limits: Limits(),
                    by: alice.session, shows: true)
            }
            await #expect(throws: RtmError.self) {
                _ = try await presenceOfA.join(alice, ChannelKey(app: "app", .message, "elsewhere"), features: [.presence])
            }
            // Node a's presence timeout for her copy passing changes nothing now.
            a.harness.clock.advance(by: .seconds(301))
            try await Task.sleep(for: .milliseconds(200))
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice", "remoteStateChanged alice", "remoteStateChanged alice"])
            #expect(try await b.harness.bus.request(WhereNow(caller: bob, userId: "alice")) == [room])
            // She hears the room's presence on node b: a snapshot there first, then who comes.
            #expect(heard(b, caller).first == "snapshot alice")
            let dave = try await a.logIn("dave")
            _ = try await a.harness.bus.request(Subscribe(caller: dave, channelName: "room", features: [.message, .presence]))
            #expect(await eventually { heard(b, caller).last == "remoteJoinChannel dave" }, "\(heard(b, caller))")
            for node in nodes { await node.stop() }
        }
    }

    @Test func aDeadNodesSessionWaitsForATakeOverUntilItsPresenceTimeoutAndKeepsWhatItHeld() async throws {
        try await RedisServer.with { redis in
            let (nodes, bob, aliceOnA) = try await bobListensAliceJoins(on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = aliceOnA.caller
            let items = [MetadataItem(key: "seat", value: "3", lease: .session)]
            _ = try await a.harness.bus.request(
                SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: Metadata(items: items)))
            _ = try await a.harness.bus.request(SetLock(caller: alice, lock: lock, ttl: 10))
            _ = try await a.harness.bus.request(AcquireLock(caller: alice, lock: lock, retry: false))
            try await advance(nodes, by: 1)
            // Node a dies; node b reaps it 4 s after its last beat, and then some: alice's lock
            // counts down (ttl 10 s), her session waits for a take-over (presence timeout 300 s).
            await a.stop()
            try await advance([b], by: 6)
            let server = Caller.server(app: "app", userId: "server")
            let reaped = try await b.harness.bus.request(GetLocks(caller: bob, channel: room))
            #expect(reaped.map(\.owner) == ["alice"])
            // Her client comes back on node b: the same session, with her item and her lock, whose
            // countdown stopped: past its ttl it is still hers.
            let resumed = try await resume(aliceOnA, on: b)
            #expect(resumed.resumed && resumed.session == alice.session)
            try await advance([b], by: 15)
            #expect(try await b.harness.bus.request(GetLocks(caller: bob, channel: room)).map(\.owner) == ["alice"])
            let metadata = try await b.harness.bus.request(GetChannelMetadata(caller: bob, channelType: .message, channelName: "room"))
            #expect(metadata.items.map(\.key) == ["seat"])
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice"])
            #expect(try await b.harness.bus.request(ListUserSessions(caller: server, userId: "alice")).map(\.session) == [alice.session])
            await b.stop()
        }
    }

    /// A node killed and started again under its id, before any node reaped it: its earlier
    /// run's sessions wait for their clients as a dead node's do, and resume on another node or
    /// on the restarted one; nobody hears them leave.
    @Test func aNodeStartedAgainUnderItsIdLeavesItsEarlierRunsSessionsToResume() async throws {
        try await RedisServer.with { redis in
            let (nodes, bob, aliceOnA) = try await bobListensAliceJoins(on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let carolOnA = try await member("carol", on: a)
            _ = try await a.harness.bus.request(
                SetPresenceState(caller: aliceOnA.caller, channel: room, items: [StateItem(key: "mood", value: "calm")]))
            #expect(await eventually { heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice", "remoteJoinChannel carol", "remoteStateChanged alice"] })
            // Node a beats (its record listed), then dies; it starts again before node b reaps it.
            try await advance(nodes, by: 1)
            await a.stop()
            let again = try await ClusterNode.start("a", on: redis, storage: true, locks: true, presence: true)
            let alice = try await resume(aliceOnA, on: b)
            #expect(alice.resumed && alice.session == aliceOnA.session)
            let carol = try await resume(carolOnA, on: again)
            #expect(carol.resumed && carol.session == carolOnA.session)
            for (node, caller) in [(b, alice.caller), (again, carol.caller)] {
                let page = try await node.harness.bus.request(WhoNow(caller: caller, channel: room, includeState: true))
                #expect(Set(page.users) == [
                    UserState(userId: "alice", states: ["mood": "calm"]), UserState(userId: "bob", states: [:]),
                    UserState(userId: "carol", states: [:]),
                ])
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice", "remoteJoinChannel carol", "remoteStateChanged alice"])
            // The restarted node goes on: a message of the room reaches carol there and alice on node b.
            try await b.publish(bob, .message, to: "room", "hello")
            #expect(await eventually { again.messages(to: carol.caller) == ["hello"] && b.messages(to: alice.caller) == ["hello"] })
            await again.stop()
            await b.stop()
        }
    }

    @Test func aSessionThatMovesBackToANodeItLeftIsWholeThere() async throws {
        try await RedisServer.with { redis in
            let (nodes, bob, aliceOnA) = try await bobListensAliceJoins(on: redis)
            let (a, b) = (nodes[0], nodes[1])
            _ = try await a.harness.bus.request(SetLock(caller: aliceOnA.caller, lock: lock, ttl: 30))
            _ = try await a.harness.bus.request(AcquireLock(caller: aliceOnA.caller, lock: lock, retry: false))
            // To node b, then back to node a, which ended its copy when she left.
            await a.harness.bus.publishAndWait(SessionDisconnected(session: aliceOnA.session))
            let onB = try await resume(aliceOnA, on: b)
            let server = Caller.server(app: "app", userId: "server")
            #expect(await eventuallyAsync { try await a.harness.bus.request(ListUserSessions(caller: server, userId: "alice")).isEmpty })
            await b.harness.bus.publishAndWait(SessionDisconnected(session: onB.session))
            let back = try await resume(onB, on: a)
            #expect(back.resumed && back.session == aliceOnA.session)
            #expect(await eventuallyAsync { try await b.harness.bus.request(ListUserSessions(caller: server, userId: "alice")).isEmpty })
            // Whole again on node a: her subscription delivers, her state and lock calls are hers.
            try await b.publish(bob, .message, to: "room", "welcome back")
            #expect(await eventually { a.messages(to: back.caller).contains("welcome back") })
            _ = try await a.harness.bus.request(SetPresenceState(caller: back.caller, channel: room, items: [StateItem(key: "mood", value: "home")]))
            #expect(try await b.harness.bus.request(GetPresenceState(caller: bob, channel: room, userId: "alice")).states == ["mood": "home"])
            _ = try await a.harness.bus.request(ReleaseLock(caller: back.caller, lock: lock))
            #expect(try await b.harness.bus.request(GetLocks(caller: bob, channel: room)).map(\.owner) == [""])
            for node in nodes { await node.stop() }
        }
    }

    /// A node dies and is reaped: its session waits as an orphan, is taken over by node b, and
    /// later comes back to the node it left (started again). When the orphan's time comes, the
    /// session it named lives on that node again: it must not end.
    @Test func aSessionBackOnTheNodeWhoseDeathOrphanedItLivesPastTheOrphansTime() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let bob = try await member("bob", on: b).caller
            #expect(await eventually { heard(b, bob) == ["snapshot bob"] })
            let aliceOnA = try await a.harness.bus.request(Login(appId: "app", userId: "alice", token: "", presenceTimeout: 10))
            _ = try await a.harness.bus.request(Subscribe(caller: aliceOnA.caller, channelName: "room", features: [.message, .presence]))
            #expect(await eventually { heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice"] })
            // Node a beats, dies, and is reaped by node b: alice's session waits 10 s from that beat.
            try await advance(nodes, by: 1)
            await a.stop()
            try await advance([b], by: 5)
            let onB = try await resume(aliceOnA, on: b)
            #expect(onB.resumed && onB.session == aliceOnA.session)
            // Node a starts again; alice's connection to node b is lost and her client goes back to a.
            let again = try await ClusterNode.start("a", on: redis, storage: true, locks: true, presence: true)
            again.harness.clock.advance(by: .seconds(6))
            await b.harness.bus.publishAndWait(SessionDisconnected(session: onB.session))
            let back = try await resume(onB, on: again)
            #expect(back.resumed && back.session == aliceOnA.session)
            // The orphan's 10 s pass, and more: she is still there, and nobody heard her go.
            try await advance([b, again], by: 12)
            let server = Caller.server(app: "app", userId: "server")
            #expect(try await again.harness.bus.request(ListUserSessions(caller: server, userId: "alice")).map(\.session) == [aliceOnA.session])
            #expect(try await b.harness.bus.request(WhereNow(caller: bob, userId: "alice")) == [room])
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice"])
            // And her session can move again: its entry in the directory is still there.
            await again.harness.bus.publishAndWait(SessionDisconnected(session: back.session))
            let onBAgain = try await resume(back, on: b)
            #expect(onBAgain.resumed && onBAgain.session == aliceOnA.session)
            await again.stop()
            await b.stop()
        }
    }

    /// Redis restarts with nothing kept: each node writes back its sessions' directory entries,
    /// so a session of either node can still move to the other.
    @Test func afterRedisRestartsEmptyASessionCanStillMoveToAnotherNode() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let aliceOnA = try await member("alice", on: a)
            let bobOnB = try await member("bob", on: b)
            try await redis.kill()
            try await redis.start()
            // The write-back is done once both are back in the room (presence is written back after the directory).
            #expect(
                await eventuallyAsync {
                    try await b.harness.bus.request(WhoNow(caller: bobOnB.caller, channel: room, includeState: false)).users.count == 2
                }, "presence written back")
            await a.harness.bus.publishAndWait(SessionDisconnected(session: aliceOnA.session))
            let alice = try await resume(aliceOnA, on: b)
            #expect(alice.resumed && alice.session == aliceOnA.session)
            await b.harness.bus.publishAndWait(SessionDisconnected(session: bobOnB.session))
            let bob = try await resume(bobOnB, on: a)
            #expect(bob.resumed && bob.session == bobOnB.session)
            // Each is whole on the other node: a message of the room reaches both.
            try await a.publish(bob.caller, .message, to: "room", "moved")
            #expect(await eventually { b.messages(to: alice.caller) == ["moved"] && a.messages(to: bob.caller) == ["moved"] })
            for node in nodes { await node.stop() }
        }
    }

    @Test func aTicketWithAnotherSecretOrUserIsANewSession() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = try await member("alice", on: a)
            await a.harness.bus.publishAndWait(SessionDisconnected(session: alice.session))
            let forged = ResumeTicket(session: alice.session, secret: "not-" + alice.ticket.secret)
            let wrongSecret = try await b.harness.bus.request(Login(appId: "app", userId: "alice", token: "", resume: forged))
            #expect(!wrongSecret.resumed)
            #expect(wrongSecret.session != alice.session)
            for node in nodes { await node.stop() }
        }
    }
}
