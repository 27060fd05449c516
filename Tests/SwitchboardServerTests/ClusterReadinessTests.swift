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
