import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

/// Nodes in one process on a real redis-server: the server API's commands on a user's sessions
/// (`CommandUserAcrossNodes`, what `disconnect` and `unsubscribe` send in cluster mode) act on
/// the user's sessions on whichever node holds them, count what each node did, answer as one node
/// does when no node acted, and wait a bounded time for a node that does not answer.
@Suite(.timeLimit(.minutes(3))) struct ClusterUserCommandTests {
    func command(_ command: UserCommand, _ user: String, on node: ClusterNode) async throws -> UserCommandTally {
        try await node.harness.bus.request(CommandUserAcrossNodes(caller: .server(app: "app", userId: user), userId: user, command: command))
    }

    /// The code `command` was refused with; nil when it was carried out.
    func refusal(_ command: UserCommand, _ user: String, on node: ClusterNode) async -> RtmErrorCode? {
        do {
            _ = try await self.command(command, user, on: node)
            return nil
        } catch {
            return (error as? RtmError)?.code
        }
    }

    @Test func aDisconnectAskedOnOneNodeEndsTheUsersSessionOnAnother() async throws {
        try await RedisServer.with { redis in
            let nodes = try await ClusterNode.start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            let alice = try await a.logIn("alice")
            #expect(try await command(.disconnect(detail: "bye"), "alice", on: b) == UserCommandTally(sessions: 1))
            #expect(a.harness.outbox.calls.contains(.disconnect(alice.session, .kickedOutByServer)))
            try await redis.withClient { client in
                #expect(await eventuallyAsync { try await client.send(["SCARD", "sb:ou:{app:alice}"]).integer == 0 })
            }
            // Online nowhere now: nothing to end, as on one node.
            #expect(try await command(.disconnect(detail: "bye"), "alice", on: b) == UserCommandTally(sessions: 0))
            for node in nodes { await node.stop() }
        }
    }

    @Test func anUnsubscribeAskedOnOneNodeTakesTheUserOutOfAChannelOnAnother() async throws {
        try await RedisServer.with { redis in
            let nodes = try await ClusterNode.start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            _ = try await a.member("bob", features: [.message])
            #expect(try await command(.unsubscribe(channelName: "room"), "bob", on: b) == UserCommandTally(sessions: 1))
            // Again: bob's node refuses it, as one node refuses an unsubscribe of no subscription.
            #expect(await refusal(.unsubscribe(channelName: "room"), "bob", on: b) == .channelNotSubscribed)
            // A user online nowhere: this node answers, as one node would.
            #expect(await refusal(.unsubscribe(channelName: "room"), "nobody", on: b) == .channelNotSubscribed)
            #expect(await refusal(.unsubscribe(channelName: "bad name!"), "bob", on: b) != nil)
            for node in nodes { await node.stop() }
        }
    }

    @Test func aNodeThatDoesNotAnswerIsWaitedForABoundedTime() async throws {
        try await RedisServer.with { redis in
            let nodes = try await ClusterNode.start(["a", "b"], on: redis)
            let (a, b) = (nodes[0], nodes[1])
            _ = try await a.logIn("carol")
            // A node that lists carol and hears her channel, and never answers (paused, say).
            let group = try EventLoopGroup(threads: 1)
            let silent = try await RedisSubscriber.connect(
                RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port)), group: group
            ) { _ in }
            try await silent.subscribe([RedisChannel("sb:u:{app:carol}")])
            try await redis.withClient { client in _ = try await client.send(["SADD", "sb:ou:{app:carol}", "silent"]) }
            let started = ContinuousClock.now
            let tally = try await command(.disconnect(detail: "bye"), "carol", on: b)
            let waited = ContinuousClock.now - started
            #expect(tally == UserCommandTally(sessions: 1, unanswered: 1))
            #expect(waited >= .seconds(2) && waited < .seconds(10), "\(waited)")
            await silent.close()
            try await BlockingWork.run { group.shutdown() }
            for node in nodes { await node.stop() }
        }
    }
}
