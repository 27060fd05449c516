import Testing
import SwitchboardCluster
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

    @Test func aSessionResumedOnAnotherNodeKeepsItsChannelsStateAndLockAndNobodySeesItGo() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let bob = try await member("bob", on: b).caller
            #expect(await eventually { heard(b, bob) == ["snapshot bob"] })
            let aliceOnA = try await member("alice", on: a)
            let alice = aliceOnA.caller
            #expect(await eventually { heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice"] })
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
            // Node a's presence timeout for her copy passing changes nothing now.
            a.harness.clock.advance(by: .seconds(301))
            try await Task.sleep(for: .milliseconds(200))
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice", "remoteStateChanged alice", "remoteStateChanged alice"])
            #expect(try await b.harness.bus.request(WhereNow(caller: bob, userId: "alice")) == [room])
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
