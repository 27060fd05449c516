import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit

/// Nodes in one process, each with the topic router over the Redis topic store and the cluster
/// link, on a real redis-server: a stream channel is one for the whole cluster, its topic
/// messages reach every subscriber on every node once and in order, and its topic events are told
/// on every node as on one.
@Suite(.timeLimit(.minutes(3))) struct ClusterTopicTests {
    func start(_ names: [String], on redis: RedisServer, limits: Limits = Limits()) async throws -> [ClusterNode] {
        try await ClusterNode.start(names, on: redis, topics: true, limits: limits)
    }

    /// Logs `user` in on `node` and joins the stream channel `live`.
    func member(_ user: String, on node: ClusterNode, channel: String = "live") async throws -> Caller {
        let caller = try await node.logIn(user)
        _ = try await node.harness.bus.request(JoinStreamChannel(caller: caller, channelName: channel))
        return caller
    }

    func joinTopic(_ caller: Caller, _ topic: String, meta: String = "", priority: RtmMessagePriority = .normal, on node: ClusterNode)
        async throws
    {
        _ = try await node.harness.bus.request(
            JoinTopic(caller: caller, channelName: "live", topic: topic, options: TopicJoinOptions(priority: priority, meta: meta)))
    }

    func subscribe(_ caller: Caller, to users: [UserID]?, on node: ClusterNode) async throws -> TopicSubscription {
        try await node.harness.bus.request(SubscribeTopic(caller: caller, channelName: "live", topic: "video", users: users))
    }

    /// Nodes a and b with two users per stream channel: alice on a joins `live` and topic `video`
    /// (with `meta`), then bob on b joins.
    func alicePublishesBobJoins(on redis: RedisServer, meta: String = "") async throws -> (nodes: [ClusterNode], alice: Caller, bob: Caller) {
        var limits = Limits()
        limits.streams.usersPerChannel = 2
        let nodes = try await start(["a", "b"], on: redis, limits: limits)
        let alice = try await member("alice", on: nodes[0])
        try await joinTopic(alice, "video", meta: meta, on: nodes[0])
        return (nodes, alice, try await member("bob", on: nodes[1]))
    }

    /// The topic events `caller` got as type, publisher and topics with their publishers.
    func heard(_ node: ClusterNode, _ caller: Caller) -> [String] {
        node.topicEvents(to: caller).map { event in
            let topics = event.topicInfos.map { info in
                info.topic + "(" + info.publishers.map { $0.meta.isEmpty ? $0.userId : "\($0.userId):\($0.meta)" }.joined(separator: ",") + ")"
            }
            return "\(event.type) \(event.publisher)" + (topics.isEmpty ? "" : " " + topics.joined(separator: " "))
        }
    }

    /// The stream messages `caller` got, as they came.
    func messages(_ node: ClusterNode, _ caller: Caller) -> [MessageDelivery] {
        node.harness.outbox.pushes(to: caller.session).compactMap {
            if case .message(let delivery) = $0, delivery.channelType == .stream { delivery } else { nil }
        }
    }

    func code(_ body: () async throws -> Void) async -> RtmErrorCode? {
        do {
            try await body()
            return nil
        } catch {
            return (error as? RtmError)?.code
        }
    }

    @Test func topicMessagesReachSubscribersOnEveryNodeOnceInThePublishersOrder() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b", "c"], on: redis)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            let alice = try await member("alice", on: a)
            try await joinTopic(alice, "video", meta: "cam", priority: .high, on: a)
            let bob = try await member("bob", on: b)
            let carol = try await member("carol", on: c)
            let dave = try await member("dave", on: a)
            // Without a user list, bob on node b takes node a's publisher.
            #expect(try await subscribe(bob, to: nil, on: b) == TopicSubscription(succeedUsers: ["alice"], failedUsers: []))
            _ = try await subscribe(carol, to: ["alice"], on: c)
            _ = try await subscribe(dave, to: nil, on: a)
            var sent: [MessageDelivery] = []
            for number in 0..<60 {
                let payload: MessagePayload = number % 3 == 0 ? .binary([UInt8(number), 0, 255]) : .string("m\(number)")
                let customType = number % 2 == 0 ? "even" : ""
                _ = try await a.harness.bus.request(
                    PublishTopicMessage(caller: alice, channelName: "live", topic: "video", payload: payload, customType: customType))
                sent.append(
                    MessageDelivery(
                        channelType: .stream, channelName: "live", channelTopic: "video", payload: payload, publisher: "alice",
                        customType: customType, timestamp: 0))
            }
            func same(_ got: [MessageDelivery]) -> Bool {
                got.map { [$0.channelName, $0.channelTopic, $0.publisher, $0.customType, "\($0.payload)"] }
                    == sent.map { [$0.channelName, $0.channelTopic, $0.publisher, $0.customType, "\($0.payload)"] }
            }
            #expect(await eventually { messages(b, bob).count >= 60 && messages(c, carol).count >= 60 && messages(a, dave).count >= 60 })
            try await Task.sleep(for: .milliseconds(200))  // anything delivered twice would have come by now
            for (node, caller) in [(b, bob), (c, carol), (a, dave)] {
                #expect(same(messages(node, caller)), "\(caller): \(messages(node, caller).map(\.payload))")
                // The topic's priority travels with each message.
                let priorities = zip(node.harness.outbox.pushes(to: caller.session), node.harness.outbox.priorities(to: caller.session))
                    .compactMap { push, priority -> RtmMessagePriority?? in
                        if case .message = push { priority } else { nil }
                    }
                #expect(priorities.allSatisfy { $0 == .high }, "\(caller)")
            }
            #expect(messages(a, alice).isEmpty)
            // Unsubscribed on node c: carol gets no more.
            _ = try await c.harness.bus.request(UnsubscribeTopic(caller: carol, channelName: "live", topic: "video"))
            _ = try await a.harness.bus.request(
                PublishTopicMessage(caller: alice, channelName: "live", topic: "video", payload: .string("last")))
            #expect(await eventually { messages(b, bob).count == 61 })
            try await Task.sleep(for: .milliseconds(100))
            #expect(messages(c, carol).count == 60)
            for node in nodes { await node.stop() }
        }
    }

    @Test func snapshotsAndTopicEventsListEveryNodesPublishersOnceInOrder() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b", "c"], on: redis)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            let alice = try await member("alice", on: a)
            try await joinTopic(alice, "video", meta: "a", on: a)
            let bob = try await member("bob", on: b)
            #expect(heard(b, bob) == ["snapshot bob video(alice:a)"])
            try await joinTopic(bob, "video", meta: "b", on: b)
            try await joinTopic(bob, "audio", on: b)
            #expect(await eventually { heard(a, alice).count == 3 })
            let carol = try await member("carol", on: c)
            #expect(heard(c, carol) == ["snapshot carol audio(bob) video(alice:a,bob:b)"])
            _ = try await a.harness.bus.request(LeaveTopic(caller: alice, channelName: "live", topic: "video"))
            #expect(await eventually { heard(b, bob).count == 2 })
            _ = try await b.harness.bus.request(LeaveStreamChannel(caller: bob, channelName: "live"))
            let bobsLeave = "remoteLeaveTopic bob audio(bob) video(bob:b)"
            #expect(await eventually { heard(a, alice).count == 4 && heard(c, carol).count == 3 })
            try await Task.sleep(for: .milliseconds(200))  // anything told twice would have come by now
            #expect(heard(a, alice) == ["snapshot alice", "remoteJoinTopic bob video(bob:b)", "remoteJoinTopic bob audio(bob)", bobsLeave])
            #expect(heard(c, carol) == ["snapshot carol audio(bob) video(alice:a,bob:b)", "remoteLeaveTopic alice video(alice:a)", bobsLeave])
            #expect(heard(b, bob) == ["snapshot bob video(alice:a)", "remoteLeaveTopic alice video(alice:a)"])
            // A new member finds what is left, wherever it joins.
            let dave = try await member("dave", on: b)
            #expect(heard(b, dave) == ["snapshot dave"])
            for node in nodes { await node.stop() }
        }
    }

    @Test func theUsersOfAStreamChannelAreCountedOnEveryNode() async throws {
        try await RedisServer.with { redis in
            var limits = Limits()
            limits.streams.usersPerChannel = 3
            let nodes = try await start(["a", "b", "c"], on: redis, limits: limits)
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            _ = try await member("alice", on: a)
            _ = try await member("bob", on: b)
            let carol = try await member("carol", on: c)
            for node in [a, b, c] {
                let dave = try await node.logIn("dave-\(node.link.configuration.nodeID)")
                #expect(
                    await code { _ = try await node.harness.bus.request(JoinStreamChannel(caller: dave, channelName: "live")) }
                        == .channelJoinFailed)
            }
            _ = try await c.harness.bus.request(LeaveStreamChannel(caller: carol, channelName: "live"))
            _ = try await member("erin", on: b)
            for node in nodes { await node.stop() }
        }
    }

    @Test func aLogoutOnOneNodeIsALeaveOfItsTopicsForTheOthers() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = try await member("alice", on: a)
            try await joinTopic(alice, "video", on: a)
            let bob = try await member("bob", on: b)
            _ = try await a.harness.bus.request(Logout(caller: alice))
            #expect(await eventually { heard(b, bob).last == "remoteLeaveTopic alice video(alice)" })
            #expect(try await subscribe(bob, to: nil, on: b) == TopicSubscription(succeedUsers: [], failedUsers: []))
            let carol = try await member("carol", on: a)
            #expect(heard(a, carol) == ["snapshot carol"])
            for node in nodes { await node.stop() }
        }
    }

    @Test func aDeadNodesMembersLeaveForEveryOtherNodeWhenItIsReaped() async throws {
        try await RedisServer.with { redis in
            let (nodes, alice, bob) = try await alicePublishesBobJoins(on: redis)
            let (a, b) = (nodes[0], nodes[1])
            // Both beat at one second; then node a dies, ending nothing of its own.
            for node in [a, b] { node.harness.clock.advance(by: .seconds(1)) }
            try await Task.sleep(for: .milliseconds(100))
            await a.stop()
            let carol = try await b.logIn("carol")
            #expect(await code { _ = try await b.harness.bus.request(JoinStreamChannel(caller: carol, channelName: "live")) } == .channelJoinFailed)
            // Its record expires three beats on; node b's next beat reaps it: alice's topics leave.
            var reaped = false
            for _ in 0..<8 where !reaped {
                b.harness.clock.advance(by: .seconds(1))
                reaped = await eventually(within: .seconds(2)) { heard(b, bob).last == "remoteLeaveTopic alice video(alice)" }
            }
            #expect(reaped, "\(heard(b, bob))")
            // Her place in the channel is free again.
            _ = try await b.harness.bus.request(JoinStreamChannel(caller: carol, channelName: "live"))
            #expect(heard(b, carol) == ["snapshot carol"])
            try await Task.sleep(for: .milliseconds(200))
            #expect(heard(b, bob) == ["snapshot bob video(alice)", "remoteLeaveTopic alice video(alice)"])
            await b.stop()
        }
    }

    @Test func aPubSubGapBringsEachMemberASnapshot() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = try await member("alice", on: a)
            let bob = try await member("bob", on: b)
            try await joinTopic(alice, "video", on: a)
            #expect(await eventually { heard(b, bob).last == "remoteJoinTopic alice video(alice)" })
            try await redis.withClient { client in _ = try await client.send(["CLIENT", "KILL", "TYPE", "pubsub"]) }
            #expect(await eventually { heard(b, bob).last == "snapshot bob video(alice)" })
            #expect(await eventually { heard(a, alice).last == "snapshot alice video(alice)" })
            // After the gap, events and messages flow again.
            _ = try await subscribe(bob, to: nil, on: b)
            _ = try await a.harness.bus.request(PublishTopicMessage(caller: alice, channelName: "live", topic: "video", payload: .string("back")))
            #expect(await eventually { messages(b, bob).map(\.payload) == [.string("back")] })
            for node in nodes { await node.stop() }
        }
    }

    /// Redis restarted with nothing kept: each node writes back its members and their topics,
    /// so the users limit counts them again, a subscriber without a user list finds the other
    /// node's publisher, and the members learn of the topics again.
    @Test func afterRedisRestartsEmptyEachNodeWritesBackItsMembersAndPublishers() async throws {
        try await RedisServer.with { redis in
            let (nodes, alice, bob) = try await alicePublishesBobJoins(on: redis, meta: "cam")
            let (a, b) = (nodes[0], nodes[1])
            #expect(await eventually { heard(b, bob).last == "snapshot bob video(alice:cam)" })
            let before = heard(b, bob).count
            try await redis.kill()
            try await redis.start()
            #expect(
                await eventuallyAsync {
                    try await subscribe(bob, to: nil, on: b) == TopicSubscription(succeedUsers: ["alice"], failedUsers: [])
                })
            #expect(
                await eventually {
                    heard(b, bob).dropFirst(before).contains { $0 == "snapshot bob video(alice:cam)" || $0 == "remoteJoinTopic alice video(alice:cam)" }
                }, "\(heard(b, bob))")
            let carol = try await b.logIn("carol")
            #expect(await code { _ = try await b.harness.bus.request(JoinStreamChannel(caller: carol, channelName: "live")) } == .channelJoinFailed)
            _ = try await a.harness.bus.request(PublishTopicMessage(caller: alice, channelName: "live", topic: "video", payload: .string("back")))
            #expect(await eventually { messages(b, bob).map(\.payload) == [.string("back")] }, "\(messages(b, bob)) \(heard(b, bob)) \(heard(a, alice)) a: \(a.link.isConnected) \(a.link.received) b: \(b.link.isConnected) \(b.link.received)")
            for node in nodes { await node.stop() }
        }
    }

    @Test func withRedisGoneTheCallsThatNeedItFailWithTheirCodes() async throws {
        try await RedisServer.with { redis in
            let nodes = try await start(["a"], on: redis)
            let a = nodes[0]
            let alice = try await member("alice", on: a)
            try await joinTopic(alice, "video", on: a)
            let bob = try await a.logIn("bob")
            try await redis.kill()
            #expect(await eventually { !a.link.isConnected })
            #expect(await code { _ = try await a.harness.bus.request(JoinStreamChannel(caller: bob, channelName: "live")) } == .channelJoinFailed)
            #expect(await code { try await joinTopic(alice, "audio", on: a) } == .channelJoinTopicFailed)
            #expect(
                await code {
                    _ = try await a.harness.bus.request(
                        PublishTopicMessage(caller: alice, channelName: "live", topic: "video", payload: .string("lost")))
                } == .channelPublishMessageFailed)
            #expect(await code { _ = try await a.harness.bus.request(LeaveStreamChannel(caller: alice, channelName: "live")) } == .channelLeaveFailed)
            // Nothing half-done: bob is no member, and alice still is.
            #expect(
                await code { _ = try await a.harness.bus.request(LeaveStreamChannel(caller: bob, channelName: "live")) } == .channelNotJoined)
            #expect(await code { _ = try await subscribe(alice, to: ["carol"], on: a) } == nil)
            await a.stop()
        }
    }
}
