import Synchronization
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
    /// A receiver that is down (every attempt fails) or up (takes and records every delivery).
    final class Receiver: WebhookPoster {
        let up: Bool
        let taken = Mutex<[WebhookRequest]>([])
        init(up: Bool) { self.up = up }
        func post(_ request: WebhookRequest) async -> WebhookPostOutcome {
            guard up else { return .failed("connection refused") }
            taken.withLock { $0.append(request) }
            return .answered(status: 204)
        }
        var eventIds: [String] {
            taken.withLock { $0.map { $0.headers.first { $0.name == "X-Switchboard-Event-Id" }?.value ?? "" } }
        }
    }

    /// Node `name` on `redis` with one webhook receiver, posting through `receiver`; the queue is
    /// the one the composition chose.
    func node(_ name: String, on redis: RedisServer, receiver: Receiver) async throws -> SwitchboardServer {
        let webhooks = WebhookConfiguration(targets: [WebhookTarget(url: "http://127.0.0.1:9/hooks")], secret: Array("s3cret".utf8))
        return try await TestServer.start { configuration in
            configuration.cluster = ClusterConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port), nodeID: name)
            configuration.webhooks = webhooks
        } modules: { modules in
            let composed = modules.webhooks as! Webhooks
            modules.webhooks = Webhooks(configuration: composed.configuration, queue: composed.queue, poster: receiver)
        }
    }

    @Test func theNodeThatReapsADeadNodeSendsWhatWaitedInItsWebhookQueue() async throws {
        try await RedisServer.with { redis in
            let (down, up) = (Receiver(up: false), Receiver(up: true))
            let a = try await node("a", on: redis, receiver: down)
            let b = try await node("b", on: redis, receiver: up)
            // Two users come online on node a while its receiver is down: both wait in its queue.
            for user in ["alice", "bob"] {
                await a.bus.publishAndWait(SessionOpened(caller: Caller(app: "app", userId: user, session: SessionID(user == "alice" ? 1 : 2))))
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
