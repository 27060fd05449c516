import Foundation
import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting

/// The server API of two cluster nodes on a real redis-server, called over HTTP from Python's
/// http.client (tools/api_call.py): `disconnect` and `unsubscribe` called on one node act on the
/// user's sessions on the other, and `info` counts the app's users on every node.
@Suite(.timeLimit(.minutes(3))) struct ClusterAPITests {
    /// Node `name` on `redis` with its admin listener and the API opened by `ServerAPITests.key`.
    func node(_ name: String, on redis: RedisServer) async throws -> (server: SwitchboardServer, admin: Int) {
        let server = try await TestServer.start { configuration in
            configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
            configuration.serverAPI = ServerAPISettings(keys: .keys([ServerAPITests.key]), callsPerSecondPerKey: 1_000)
            configuration.cluster = ClusterConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port), nodeID: name)
        }
        return (server, try #require(server.adminPort))
    }

    @Test func disconnectUnsubscribeAndInfoOnOneNodeSeeTheUsersOfEvery() async throws {
        try await RedisServer.with { redis in
            let (a, _) = try await node("a", on: redis)
            let (b, admin) = try await node("b", on: redis)
            let alice = try await a.bus.request(Login(appId: "app", userId: "alice", token: "")).caller
            _ = try await a.bus.request(Subscribe(caller: alice, channelName: "room", features: [.message]))
            let bob = try await a.bus.request(Login(appId: "app", userId: "bob", token: "")).caller
            _ = try await b.bus.request(Login(appId: "app", userId: "carol", token: ""))
            // Node b counts the app's three users (read from Redis at once; the sessions once node a
            // published its status, at its next beat).
            #expect(
                await eventuallyAsync {
                    try await ServerAPITests.call(admin, "info", "{\"appId\": \"app\"}").body.contains(
                        "\"acrossNodes\":{\"sessions\":3,\"connections\":0,\"users\":3}")
                })
            // Alice and bob are on node a; node b's API reaches them.
            let unsubscribed = try await ServerAPITests.call(admin, "unsubscribe", "{\"appId\": \"app\", \"userId\": \"alice\", \"channel\": \"room\"}")
            #expect(unsubscribed.status == "200" && unsubscribed.body.trimmingCharacters(in: .whitespacesAndNewlines) == "{\"sessions\":1}", "\(unsubscribed)")
            let again = try await ServerAPITests.call(admin, "unsubscribe", "{\"appId\": \"app\", \"userId\": \"alice\", \"channel\": \"room\"}")
            #expect(again.status == "404" && again.body.contains("channelNotSubscribed"), "\(again)")
            let disconnected = try await ServerAPITests.call(admin, "disconnect", "{\"appId\": \"app\", \"userId\": \"bob\"}")
            #expect(disconnected.status == "200" && disconnected.body.trimmingCharacters(in: .whitespacesAndNewlines) == "{\"sessions\":1}", "\(disconnected)")
            #expect(try await a.bus.request(ListUserSessions(caller: .server(app: "app", userId: "bob"), userId: "bob")).isEmpty)
            let nobody = try await ServerAPITests.call(admin, "disconnect", "{\"appId\": \"app\", \"userId\": \"bob\"}")
            #expect(nobody.status == "200" && nobody.body.trimmingCharacters(in: .whitespacesAndNewlines) == "{\"sessions\":0}", "\(nobody)")
            _ = bob
            await a.shutdown()
            await b.shutdown()
        }
    }
}
