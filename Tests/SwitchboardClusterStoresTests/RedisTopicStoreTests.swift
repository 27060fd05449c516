import Testing
import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTopicContract
import SwitchboardTopicRouter
import SwitchboardTransport

/// The Redis topic store on a redis-server of each test's own: the contract every topic store
/// keeps, and what only a store shared by nodes has.
@Suite(.timeLimit(.minutes(3))) struct RedisTopicStoreTests {
    let live = ChannelKey(app: "app", .stream, "live")
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(1))

    func member(_ caller: Caller) -> StreamMember { StreamMember(caller: caller, features: [.presence]) }

    @Test(arguments: TopicStoreContract.allCases) func theStoreKeepsTheContract(scenario: TopicStoreContract) async throws {
        try await RedisServer.with { redis in
            let store = try await redis.topicStore()
            try await scenario.run(on: store)
            await store.close()
        }
    }

    @Test func membersAndPublishersAreOneForEveryNodeAndTheUsersLimitCountsThemAll() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.topicStore(node: "node-a")
            let b = try await redis.topicStore(node: "node-b")
            var limits = Limits()
            limits.streams.usersPerChannel = 2
            // Both nodes have a session 1: two members.
            _ = try await a.join(member(alice), to: live, limits: limits)
            _ = try await a.joinTopic(alice.session, "video", in: live, options: TopicJoinOptions(meta: "cam"), limits: limits, operation: "j")
            #expect(
                try await b.join(member(bob), to: live, limits: limits)
                    == [TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "cam")])])
            // The channel is full for a third session on either node.
            let carol = Caller(app: "app", userId: "carol", session: SessionID(2))
            await #expect(throws: RtmError.self) { _ = try await a.join(member(carol), to: live, limits: limits) }
            do {
                _ = try await b.join(member(carol), to: live, limits: limits)
                Issue.record("a third member joined a channel of two")
            } catch {
                #expect((error as? RtmError)?.code == .channelJoinFailed)
            }
            // Node b subscribes to every current publisher: node a's alice.
            let answer = try await b.subscribe(bob.session, to: nil, in: "video", of: live, limits: limits, operation: "s")
            #expect(answer == TopicSubscription(succeedUsers: ["alice"], failedUsers: []))
            #expect(b.receivers(of: "alice", in: "video", of: live) == [bob.session])
            // Routing stays each node's: node a has no subscriber of alice.
            #expect(try a.publication(of: alice.session, in: "video", of: live, operation: "p").receivers == [])
            // Node b's session 1 leaving is bob leaving, and makes room.
            #expect(try await b.leave(bob.session, from: live)?.caller == bob)
            _ = try await b.join(member(carol), to: live, limits: limits)
            #expect(try await b.topics(of: live).first?.publishers.map(\.userId) == ["alice"])
            await a.close()
            await b.close()
        }
    }

    @Test func changesAndMessagesArePublishedAsTheNodesReadThem() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.topicStore(node: "node-a")
            let b = try await redis.topicStore(node: "node-b")
            let (subscriber, group, published) = try await redis.recordPublished(on: TopicKeys(live).events)
            _ = try await a.join(member(alice), to: live, limits: Limits())
            _ = try await b.join(member(bob), to: live, limits: Limits())
            _ = try await a.joinTopic(alice.session, "video", in: live, options: TopicJoinOptions(meta: "m"), limits: Limits(), operation: "j")
            let delivery = MessageDelivery(
                channelType: .stream, channelName: "live", channelTopic: "video", payload: .binary([0, 1, 255]), publisher: "alice",
                customType: "frame", timestamp: 42)
            try a.relay(TopicMessage(channel: live, delivery: delivery, priority: .high))
            _ = try await a.joinTopic(alice.session, "audio", in: live, options: TopicJoinOptions(), limits: Limits(), operation: "j")
            _ = try await a.leaveTopic(alice.session, "video", in: live, operation: "l")
            _ = try await a.leave(alice.session, from: live)
            #expect(await eventually { published.values.count == 5 })
            let onA = published.values.compactMap { a.news(publishedAs: $0) }
            let onB = published.values.compactMap { b.news(publishedAs: $0) }
            #expect(onA.count == 5 && onB.count == 5)
            // The message: an echo on its own node, the same delivery and priority on the other.
            #expect(onA[1] == .echo)
            #expect(onB[1] == .message(TopicMessage(channel: live, delivery: delivery, priority: .high)))
            // The changes, numbered in order; the session that made them is node a's on node a only.
            let changes = onA.compactMap { if case .change(let change) = $0 { change } else { nil } }
            #expect(changes.map(\.type) == [.remoteJoinTopic, .remoteJoinTopic, .remoteLeaveTopic, .remoteLeaveTopic])
            #expect(changes.map(\.sequence) == changes.map(\.sequence).sorted() && Set(changes.map(\.sequence)).count == 4)
            #expect(changes.map(\.except) == [alice.session, alice.session, alice.session, alice.session])
            #expect(changes.last?.topics == [TopicInfo(topic: "audio", publishers: [TopicPublisher(userId: "alice", meta: "")])])
            #expect(onB.allSatisfy { if case .change(let change) = $0 { change.except == nil } else { true } })
            // A snapshot says which change it shows last.
            #expect(try await b.snapshot(of: live).sequence == changes.last!.sequence)
            #expect(a.news(publishedAs: [0x93, 1, 2, 3]) == nil)
            await subscriber.close()
            try await BlockingWork.run { group.shutdown() }
            await a.close()
            await b.close()
        }
    }

    @Test func aReapedNodesSessionsLeaveAndARestartLeavesItsEarlierRunToTheReaper() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.topicStore(node: "node-a")
            let b = try await redis.topicStore(node: "node-b")
            let other = ChannelKey(app: "app", .stream, "other")
            for channel in [live, other] {
                _ = try await a.join(member(alice), to: channel, limits: Limits())
                _ = try await a.joinTopic(alice.session, "video", in: channel, options: TopicJoinOptions(), limits: Limits(), operation: "j")
            }
            _ = try await b.join(member(bob), to: live, limits: Limits())
            // Node a is not marked reaped: the reaper's step leaves it alone.
            _ = try await b.reapSessions(ofNode: "node-a", lastBeat: WallClockTime(millisecondsSince1970: 0))
            #expect(try await b.topics(of: live).count == 1)
            // Marked: its sessions leave every stream channel, once.
            _ = try await redis.send(["ZADD", DeadNodes.reapedKey, "1", "node-a"])
            _ = try await b.reapSessions(ofNode: "node-a", lastBeat: WallClockTime(millisecondsSince1970: 0))
            #expect(try await b.topics(of: live) == [])
            #expect(try await b.topics(of: other) == [])
            _ = try await b.reapSessions(ofNode: "node-a", lastBeat: WallClockTime(millisecondsSince1970: 0))
            // Node b restarts: opening its store keeps its earlier run's bob; the cluster link reaps
            // that run as a dead node's (marked while it does), and then bob leaves.
            _ = try await b.joinTopic(bob.session, "audio", in: live, options: TopicJoinOptions(), limits: Limits(), operation: "j")
            await b.close()
            let again = try await redis.topicStore(node: "node-b")
            #expect(try await again.topics(of: live).count == 1)
            _ = try await redis.send(["ZADD", DeadNodes.reapedKey, "1", "node-b"])
            _ = try await again.reapSessions(ofNode: "node-b", lastBeat: WallClockTime(millisecondsSince1970: 0))
            #expect(try await again.topics(of: live) == [])
            #expect(try await redis.send(["HLEN", "sb:t:{\(TopicKeys(live).tag)}:m"]).integer == 0)
            await a.close()
            await again.close()
        }
    }
}
