import Foundation
import Testing
import SwitchboardCluster
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTestKit

/// `/health/ready` of a cluster node follows its Redis: not ready within seconds of a frozen or
/// dead Redis, ready again once Redis is back, with no hand from outside.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ClusterReadinessTests {
    /// Polls `/health/ready` until its status is `status`, within the standard patience; returns
    /// the last answer's lines.
    func readiness(becomes status: String, admin: Int) async throws -> [String] {
        let deadline = ContinuousClock.now + Patience.standard
        var answer: [String] = []
        repeat {
            answer = try await adminProbe(["request", "\(admin)", "GET", "/health/ready"])
            if answer.first == status { return answer }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return answer
    }

    @Test func readinessFollowsAFrozenAndADeadRedis() async throws {
        try await RedisServer.with { redis in
            let (server, admin) = try await startWithAdmin { configuration in
                configuration.cluster = ClusterConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port), nodeID: "a")
            }
            var answer = try await readiness(becomes: "200", admin: admin)
            #expect(answer.first == "200", "\(answer)")
            #expect(answer.count > 2 && answer[2].contains("\"redis\":\"ok\"") && answer[2].contains("\"pubsub\":\"ok\""), "\(answer)")
            // The cluster's families: one live node (this one, after a beat), a measured round trip.
            let samples = try await MetricsScrapeTests.scrape(admin)
            #expect(samples["switchboard_cluster_live_nodes"] == 1, "\(samples.filter { $0.key.contains("cluster") })")
            #expect((samples["switchboard_cluster_redis_round_trip_seconds"] ?? 0) > 0)
            #expect(samples["switchboard_cluster_pubsub_gaps_total"] == 0)
            if let promtool = MetricsScrapeTests.promtool {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-metrics-\(UUID()).txt")
                defer { try? FileManager.default.removeItem(at: file) }
                _ = try await adminProbe(["save-metrics", "\(admin)", file.path])
                let check = try await ProcessRunner.run("/bin/sh", ["-c", "\(promtool) check metrics < '\(file.path)'"])
                #expect(check.status == 0, "\(check.text)")
            }

            // Frozen: the connections stay open, nothing comes back.
            await redis.pause()
            answer = try await readiness(becomes: "503", admin: admin)
            #expect(answer.first == "503", "\(answer)")
            #expect(answer.count > 2 && answer[2].contains("pubsub"), "\(answer)")
            await redis.resume()
            answer = try await readiness(becomes: "200", admin: admin)
            #expect(answer.first == "200", "\(answer)")

            // Dead, then started again on the same port.
            try await redis.kill()
            answer = try await readiness(becomes: "503", admin: admin)
            #expect(answer.first == "503", "\(answer)")
            try await redis.start()
            answer = try await readiness(becomes: "200", admin: admin)
            #expect(answer.first == "200", "\(answer)")
            await server.shutdown()
        }
    }
}
