import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting
import SwitchboardWebhooks

/// Two cluster nodes on a real redis-server, composed as `switchboard serve --cluster` composes
/// them (the webhook queue in Redis, the reaper's steps): what waited in a dead node's webhook
/// queue is sent by the node that reaps it.
@Suite(.timeLimit(.minutes(3))) struct ClusterWebhookTakeOverTests {
    typealias Receiver = ClusterWebhookNodes.Receiver

    func node(_ name: String, on redis: RedisServer, receiver: Receiver) async throws -> SwitchboardServer {
        try await ClusterWebhookNodes.node(name, on: redis, receiver: receiver)
    }

    @Test func theNodeThatReapsADeadNodeSendsWhatWaitedInItsWebhookQueue() async throws {
        try await RedisServer.with { redis in
            let (down, up) = (Receiver(up: false), Receiver(up: true))
            let a = try await node("a", on: redis, receiver: down)
            let b = try await node("b", on: redis, receiver: up)
            // Two users come online (in the cluster) on node a while its receiver is down: both
            // wait in its queue.
            for user in ["alice", "bob"] {
                await a.bus.publishAndWait(UserOnlineAcrossNodes(user: UserKey("app", user), ended: nil))
            }
            #expect(await eventuallyAsync { (try? await a.bus.request(WebhookStatistics())).map { $0.queued == 2 && $0.failed >= 1 } ?? false })
            let waiting = try await a.bus.request(WebhookStatistics())
            // Node a stops for good; node b reaps it within seconds and sends what waited, in order.
            await a.shutdown()
            // Reaped within seconds of its last beat on an idle machine; a loaded run starves the beats too.
            #expect(await eventually(within: .seconds(60)) { up.taken.withLock { $0.count } == 2 }, "\(up.eventIds)")
            let bodies = up.taken.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } }
            #expect(bodies.count == 2 && bodies[0].contains("\"alice\"") && bodies[1].contains("\"bob\""), "\(bodies)")
            #expect(bodies.allSatisfy { $0.contains("user.online") })
            #expect(try await b.bus.request(WebhookStatistics()).queued == 0)
            #expect(waiting.enqueued == 2)
            await b.shutdown()
        }
    }
}
