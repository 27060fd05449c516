import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit

/// Nodes in one process, each with the presence module over the Redis presence store and the
/// cluster link, on a real redis-server: a channel's presence is one for the whole cluster, and
/// every listener, on whichever node, hears each change once, in the store's order.
@Suite(.timeLimit(.minutes(3))) struct ClusterPresenceTests {
    let room = ChannelAddress(.message, "room")

    func start(_ names: [String], on redis: RedisServer, limits: Limits = Limits()) async throws -> [ClusterNode] {
        try await ClusterNode.start(names, on: redis, presence: true, limits: limits)
    }

    /// Logs `user` in on `node` and subscribes it to the room with `features`.
    func member(_ user: String, on node: ClusterNode, features: RtmSubscribeChannelFeature = [.message, .presence]) async throws -> Caller {
        try await node.member(user, features: features)
    }

    /// Nodes a and b, bob on b listening (his snapshot first), then alice joining on a, which bob heard.
    func bobListensAliceJoins(on redis: RedisServer) async throws -> (a: ClusterNode, b: ClusterNode, alice: Caller, bob: Caller) {
        let nodes = try await start(["a", "b"], on: redis)
        let (a, b) = (nodes[0], nodes[1])
        let bob = try await member("bob", on: b)
        #expect(await eventually { heard(b, bob) == ["snapshot bob"] })
        let alice = try await member("alice", on: a)
        #expect(await eventually { heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice"] })
        return (a, b, alice, bob)
    }

    /// The events `caller` got as type and publisher, in order.
    func heard(_ node: ClusterNode, _ caller: Caller) -> [String] {
        node.presenceEvents(to: caller).map { event in
            let states = event.states.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            return "\(event.type) \(event.publisher)" + (states.isEmpty ? "" : " \(states)")
        }
    }

    @Test func usersOnThreeNodesAreOneChannelForEveryQuestion() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b", "c"], on: redis)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            // A member's own node answers its presence questions after its join, as on one node; so
            // each asks its own node once, and the next joins only after that (a join reaches the
            // shared roster when its node's presence module has handled it, a moment after the
            // subscribe's answer: without this, carol, who asks for no presence events and so waits
            // for no relay, could be in the roster before bob).
            var callers: [Caller] = []
            for (node, user, features) in [(a, "alice", [.message, .presence]), (b, "bob", [.message, .presence]), (c, "carol", [.message])]
                as [(ClusterNode, String, RtmSubscribeChannelFeature)]
            {
                let caller = try await member(user, on: node, features: features)
                callers.append(caller)
                let page = try await node.harness.bus.request(WhoNow(caller: caller, channel: room))
                #expect(page.users.last?.userId == user, "\(page.users)")
            }
            let (alice, bob, carol) = (callers[0], callers[1], callers[2])
            // whoNow on each node lists everyone, in join order.
            for (node, caller) in [(a, alice), (b, bob), (c, carol)] {
                let page = try await node.harness.bus.request(WhoNow(caller: caller, channel: room))
                #expect(page.users.map(\.userId) == ["alice", "bob", "carol"], "on \(caller)")
            }
            // A state set on node a is read on node c, and whereNow on node c finds alice.
            _ = try await a.harness.bus.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "mood", value: "calm")]))
            let state = try await c.harness.bus.request(GetPresenceState(caller: carol, channel: room, userId: "alice"))
            #expect(state == UserState(userId: "alice", states: ["mood": "calm"]))
            #expect(try await c.harness.bus.request(WhereNow(caller: carol, userId: "alice")) == [room])
            let withStates = try await b.harness.bus.request(WhoNow(caller: bob, channel: room, includeState: true))
            #expect(withStates.users.first == UserState(userId: "alice", states: ["mood": "calm"]))
            // User-level presence across nodes.
            #expect(
                await eventuallyAsync {
                    try await c.harness.bus.request(GetUserPresence(caller: carol, userIds: ["alice", "bob", "nobody"])).map(\.online)
                        == [true, true, false]
                })
            // The server API on node c sets alice's state (she is on node a): node b's listener hears it.
            let server = Caller.server(app: "app", userId: "server")
            _ = try await c.harness.bus.request(
                SetMemberPresenceState(caller: server, channel: room, userId: "alice", items: [StateItem(key: "mood", value: "busy")]))
            #expect(await eventually { heard(b, bob).last == "remoteStateChanged alice mood=busy" })
            #expect(try await b.harness.bus.request(GetPresenceState(caller: bob, channel: room, userId: "alice")).states == ["mood": "busy"])
            // Alice leaves on node a: gone for node c too.
            _ = try await a.harness.bus.request(Unsubscribe(caller: alice, channelName: "room"))
            #expect(await eventuallyAsync { try await c.harness.bus.request(WhereNow(caller: carol, userId: "alice")) == [] })
            #expect(try await c.harness.bus.request(WhoNow(caller: carol, channel: room)).users.map(\.userId) == ["bob", "carol"])
            #expect(try await b.harness.bus.request(WhoNow(caller: bob, channel: room, includeUserId: false)).totalOccupancy == 2)
            for node in nodes { await node.stop() }
        }
    }

    @Test func listenersOnEveryNodeHearEachChangeOnceInOrder() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b", "c"], on: redis)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            // Each listener has its snapshot before the next one joins, so each join is told.
            let bob = try await member("bob", on: b)
            #expect(await eventually { heard(b, bob) == ["snapshot bob"] })
            let carol = try await member("carol", on: c)
            #expect(await eventually { heard(c, carol) == ["snapshot carol"] })
            let dave = try await member("dave", on: a)
            #expect(await eventually { heard(b, bob).count == 3 && heard(c, carol).count == 2 && heard(a, dave).count == 1 })
            let alice = try await member("alice", on: a)
            _ = try await a.harness.bus.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "mood", value: "calm")]))
            // Alice stays until her own node has relayed her change: she is not told it.
            #expect(await eventually { heard(a, dave).count == 3 })
            _ = try await a.harness.bus.request(Unsubscribe(caller: alice, channelName: "room"))
            let aliceChanges = ["remoteJoinChannel alice", "remoteStateChanged alice mood=calm", "remoteLeaveChannel alice"]
            // Bob on node b: his snapshot, carol's and dave's joins, then alice's changes, once each.
            #expect(await eventually { heard(b, bob).count >= 6 && heard(c, carol).count >= 5 && heard(a, dave).count >= 4 })
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel carol", "remoteJoinChannel dave"] + aliceChanges)
            #expect(heard(c, carol) == ["snapshot carol", "remoteJoinChannel dave"] + aliceChanges)
            // Dave on alice's own node hears them once too, and alice her snapshot only.
            #expect(heard(a, dave) == ["snapshot dave"] + aliceChanges)
            #expect(heard(a, alice) == ["snapshot alice"])
            #expect(a.presenceEvents(to: alice).first?.snapshot.map(\.userId) == ["bob", "carol", "dave", "alice"])
            try await Task.sleep(for: .milliseconds(200))
            #expect(heard(b, bob).count == 6 && heard(c, carol).count == 5 && heard(a, dave).count == 4)
            for node in nodes { await node.stop() }
        }
    }

    @Test func aLostConnectionIsSeenOnEveryNodeAndItsGraceEndingIsOneTimeout() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await bobListensAliceJoins(on: redis)
            let nodes = [a, b]
            // Alice's connection drops on node a: still online for node b, last seen when it dropped.
            let dropped = a.harness.clock.wallMilliseconds
            await a.harness.bus.publishAndWait(SessionDisconnected(session: alice.session))
            #expect(
                await eventuallyAsync {
                    try await b.harness.bus.request(GetUserPresence(caller: bob, userIds: ["alice"]))
                        == [UserPresence(userId: "alice", online: true, lastSeen: dropped)]
                })
            // Her grace runs out on node a's clock: one timeout for bob, and she is gone for node b.
            a.harness.clock.advance(by: .seconds(301))
            #expect(await eventually { heard(b, bob).last == "remoteConnectionTimeout alice" })
            #expect(
                await eventuallyAsync {
                    try await b.harness.bus.request(GetUserPresence(caller: bob, userIds: ["alice"])).map(\.online) == [false]
                })
            #expect(try await b.harness.bus.request(WhoNow(caller: bob, channel: room)).users.map(\.userId) == ["bob"])
            try await Task.sleep(for: .milliseconds(200))
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice", "remoteConnectionTimeout alice"])
            for node in nodes { await node.stop() }
        }
    }

    @Test func aDeadNodesMembersTimeOutForEveryOtherNodeAfterTheirPresenceTimeout() async throws {
        try await RedisServer.with { redis in
            let (a, b, _, bob) = try await bobListensAliceJoins(on: redis)
            // Both beat at one second; then node a dies, ending nothing of its own.
            for node in [a, b] { node.harness.clock.advance(by: .seconds(1)) }
            try await Task.sleep(for: .milliseconds(100))
            let lastBeat = a.harness.clock.wallMilliseconds
            await a.stop()
            #expect(try await b.harness.bus.request(WhoNow(caller: bob, channel: room)).users.map(\.userId) == ["bob", "alice"])
            // Its record expires three beats on and node b reaps it: alice lost her connection at
            // its last beat, and waits there for a take-over, still in the room.
            var reaped = false
            for _ in 0..<8 where !reaped {
                b.harness.clock.advance(by: .seconds(1))
                reaped = await eventuallyAsync(within: .seconds(2)) {
                    try await b.harness.bus.request(GetUserPresence(caller: bob, userIds: ["alice"]))
                        == [UserPresence(userId: "alice", online: true, lastSeen: lastBeat)]
                }
            }
            #expect(reaped)
            #expect(try await b.harness.bus.request(WhoNow(caller: bob, channel: room)).users.map(\.userId) == ["bob", "alice"])
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice"])
            // Her presence timeout (300 s) from the last beat passes untaken: one timeout for bob.
            var ended = false
            for _ in 0..<4 where !ended {
                b.harness.clock.advance(by: .seconds(100))
                ended = await eventually(within: .seconds(2)) { heard(b, bob).last == "remoteConnectionTimeout alice" }
            }
            #expect(ended, "\(heard(b, bob))")
            #expect(try await b.harness.bus.request(WhoNow(caller: bob, channel: room)).users.map(\.userId) == ["bob"])
            #expect(try await b.harness.bus.request(GetUserPresence(caller: bob, userIds: ["alice"])).map(\.online) == [false])
            try await Task.sleep(for: .milliseconds(200))
            #expect(heard(b, bob) == ["snapshot bob", "remoteJoinChannel alice", "remoteConnectionTimeout alice"])
            await b.stop()
        }
    }

    @Test func aListenerInIntervalModeGetsTheClustersChangesAndOccupancyOnItsNodesTimer() async throws {
        try await RedisServer.with { redis in
            var limits = Limits()
            limits.presence.intervalThreshold = 8
            limits.presence.interval = .seconds(5)
            let nodes = try await start(["a", "b"], on: redis, limits: limits)
            let (a, b) = (nodes[0], nodes[1])
            let bob = try await member("bob", on: b)
            #expect(await eventually { heard(b, bob) == ["snapshot bob"] })
            // Nine users join on node a: the channel passes the threshold at the eighth (occupancy 9).
            for number in 1...9 { _ = try await member("user\(number)", on: a, features: [.message]) }
            #expect(await eventually { heard(b, bob).count == 8 })
            #expect(heard(b, bob).dropFirst() == ArraySlice((1...7).map { "remoteJoinChannel user\($0)" }))
            // Node b's timer sends what it gathered of node a's joins, with the cluster's occupancy.
            var joined: [UserID] = []
            for _ in 0..<20 where joined.count < 2 {
                b.harness.clock.advance(by: .seconds(5))
                try await Task.sleep(for: .milliseconds(100))
                let intervals = b.presenceEvents(to: bob).filter { $0.type == .interval }
                joined = intervals.flatMap { $0.interval?.joinUserList ?? [] }
            }
            #expect(joined == ["user8", "user9"])
            #expect(b.presenceEvents(to: bob).last { $0.type == .interval }?.interval?.totalOccupancy == 10)
            for node in nodes { await node.stop() }
        }
    }

    @Test func aSessionEndingOnOneNodeIsALeaveForTheOthersAndAGapBringsASnapshot() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await bobListensAliceJoins(on: redis)
            let nodes = [a, b]
            _ = try await a.harness.bus.request(Logout(caller: alice))
            #expect(await eventually { heard(b, bob).last == "remoteLeaveChannel alice" })
            // Node b's link to pub/sub drops: what it may have missed comes as a new snapshot.
            let carol = try await member("carol", on: a)
            #expect(await eventually { heard(b, bob).last == "remoteJoinChannel carol" })
            try await redis.withClient { client in _ = try await client.send(["CLIENT", "KILL", "TYPE", "pubsub"]) }
            #expect(await eventually { heard(b, bob).last == "snapshot bob" })
            #expect(b.presenceEvents(to: bob).last?.snapshot.map(\.userId) == ["bob", "carol"])
            _ = carol
            for node in nodes { await node.stop() }
        }
    }

    /// Redis restarted with nothing kept: each node writes back its sessions' memberships and
    /// states (a state the server API changed on another node included, as the node heard it),
    /// and the listeners learn of them; a member that left before is not written back, and a
    /// later drop of the pub/sub link alone writes nothing again.
    @Test func afterRedisRestartsEmptyEachNodeWritesBackItsMembersAndTheirStates() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await bobListensAliceJoins(on: redis)
            let dave = try await member("dave", on: a)
            #expect(await eventually { heard(b, bob).last == "remoteJoinChannel dave" })
            _ = try await a.harness.bus.request(SetPresenceState(caller: alice, channel: room, items: [StateItem(key: "mood", value: "calm")]))
            _ = try await b.harness.bus.request(
                SetMemberPresenceState(
                    caller: .server(app: "app", userId: "server"), channel: room, userId: "alice",
                    items: [StateItem(key: "mood", value: "busy")]))
            #expect(await eventually { heard(b, bob).last == "remoteStateChanged alice mood=busy" })
            _ = try await a.harness.bus.request(Logout(caller: dave))
            #expect(await eventually { heard(b, bob).last == "remoteLeaveChannel dave" })
            let before = heard(b, bob).count
            try await redis.kill()
            try await redis.start()
            // Both nodes' members are back, alice with the state she had, for either node's questions.
            for (node, caller) in [(a, alice), (b, bob)] {
                #expect(
                    await eventuallyAsync {
                        let page = try await node.harness.bus.request(WhoNow(caller: caller, channel: room, includeState: true))
                        return Set(page.users) == [UserState(userId: "alice", states: ["mood": "busy"]), UserState(userId: "bob", states: [:])]
                    }, "whoNow on \(caller)")
            }
            #expect(try await b.harness.bus.request(WhereNow(caller: bob, userId: "alice")) == [room])
            #expect(try await b.harness.bus.request(GetUserPresence(caller: bob, userIds: ["alice", "dave"])).map(\.online) == [true, false])
            // Bob learns that alice is there (a snapshot after the gap, or her join written back),
            // and hears nobody leave.
            #expect(
                await eventually {
                    let events = b.presenceEvents(to: bob).dropFirst(before)
                    return events.contains { $0.type == .snapshot && $0.snapshot.contains { $0.userId == "alice" } }
                        || heard(b, bob).dropFirst(before).contains("remoteJoinChannel alice mood=busy")
                })
            #expect(!heard(b, bob).dropFirst(before).contains { $0.hasPrefix("remoteLeaveChannel") || $0.hasPrefix("remoteConnectionTimeout") })
            // Redis kept everything this time: the pub/sub link drops and comes back, nothing is written again.
            let settled = heard(b, bob).count
            try await redis.withClient { client in _ = try await client.send(["CLIENT", "KILL", "TYPE", "pubsub"]) }
            #expect(await eventually { heard(b, bob).dropFirst(settled).contains("snapshot bob") })
            try await Task.sleep(for: .milliseconds(500))
            #expect(heard(b, bob).dropFirst(settled).filter { $0.hasPrefix("remote") } == [], "\(heard(b, bob).dropFirst(settled))")
            for node in [a, b] { await node.stop() }
        }
    }

    /// The server API's channel list, asked on any node, lists every node's channels with their
    /// members and users, by type then name, in pages; another app's channels are not in it.
    @Test func theChannelListIsEveryNodesWhicheverNodeIsAsked() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = try await member("alice", on: a)
            _ = try await a.harness.bus.request(Subscribe(caller: alice, channelName: "lobby", features: [.message]))
            _ = try await member("bob", on: b, features: [.message, .beQuiet])
            let other = try await a.harness.bus.request(Login(appId: "other", userId: "olga", token: "")).caller
            _ = try await a.harness.bus.request(Subscribe(caller: other, channelName: "elsewhere", features: [.message]))
            let server = Caller.server(app: "app", userId: "server")
            @Sendable func list(on node: ClusterNode, after: ChannelAddress? = nil, limit: Int = 10) async throws -> ChannelPage {
                try await node.harness.bus.request(
                    ListChannels(caller: server, channelType: nil, pattern: ChannelPattern(""), after: after, limit: limit))
            }
            let lobby = ChannelAddress(.message, "lobby")
            for node in [a, b] {
                #expect(
                    await eventuallyAsync {
                        try await list(on: node).channels == [
                            ChannelSummary(channel: lobby, members: 1, users: 1), ChannelSummary(channel: room, members: 2, users: 2),
                        ]
                    })
            }
            let first = try await list(on: b, limit: 1)
            #expect(first.channels.map(\.channel) == [lobby] && first.next == lobby)
            let second = try await list(on: b, after: lobby, limit: 1)
            #expect(second.channels.map(\.channel) == [room] && second.next == nil)
            // Alice leaves the lobby on node a: node b lists it no more.
            _ = try await a.harness.bus.request(Unsubscribe(caller: alice, channelName: "lobby"))
            #expect(await eventuallyAsync { try await list(on: b).channels.map(\.channel) == [room] })
            for node in nodes { await node.stop() }
        }
    }
}
