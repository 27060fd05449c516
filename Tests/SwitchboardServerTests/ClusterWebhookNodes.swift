import Synchronization
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting
import SwitchboardWebhooks

/// Cluster nodes with webhooks, composed as `switchboard serve --cluster` composes them (the
/// webhook queue in Redis, the reaper's steps), each posting to a receiver of the test's.
enum ClusterWebhookNodes {
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
        /// The bodies taken, in order.
        var bodies: [String] { taken.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } } }
    }

    /// Node `name` on `redis` with one webhook receiver, posting through `receiver`; the queue is
    /// the one the composition chose.
    static func node(_ name: String, on redis: RedisServer, receiver: Receiver) async throws -> SwitchboardServer {
        let webhooks = WebhookConfiguration(targets: [WebhookTarget(url: "http://127.0.0.1:9/hooks")], secret: Array("s3cret".utf8))
        return try await TestServer.start { configuration in
            configuration.cluster = ClusterConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port), nodeID: name)
            configuration.webhooks = webhooks
        } modules: { modules in
            let composed = modules.webhooks as! Webhooks
            modules.webhooks = Webhooks(configuration: composed.configuration, queue: composed.queue, poster: receiver)
        }
    }
}
