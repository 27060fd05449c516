import Foundation
import Testing
import SwitchboardTestKit
import SwitchboardTransport

/// The server API's `info` of two `switchboard serve --cluster` processes on one real
/// redis-server, called with Python's http.client (tools/api_call.py): either node lists both,
/// each with its health and load, and a node killed with SIGKILL drops out of the other's list
/// within the three beats its liveness record lasts.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ClusterNodesProcessTests {
    static let key = "cluster-nodes-key-0123456789"

    /// A node as `info` lists it: its name, whether it is the one answering, whether it is
    /// ready, and its sessions of the app asked.
    struct Listed: Equatable, CustomStringConvertible {
        var nodeId: String
        var isSelf: Bool
        var ready: Bool
        var appSessions: Int
        var description: String { "\(nodeId)\(isSelf ? " (self)" : "")\(ready ? "" : " not ready") \(appSessions) sessions" }
    }

    typealias Answer = (nodes: [Listed], acrossNodes: Int, text: String)

    /// Calls `info` on `admin` until `holds` is true of its answer, within the standard patience;
    /// returns the last answer.
    func info(_ admin: Int, until holds: (Answer) -> Bool) async throws -> Answer {
        let deadline = ContinuousClock.now + Patience.standard
        var answer = try await info(admin)
        while !holds(answer), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            answer = try await info(admin)
        }
        return answer
    }

    /// `info` of `app` from the node whose admin listener is on `admin`: the nodes it lists, and
    /// the app's sessions summed over them.
    func info(_ admin: Int, app: String = "test-app") async throws -> Answer {
        let answer = try await ServerAPITests.call(admin, "info", key: Self.key, "{\"appId\": \"\(app)\"}")
        guard answer.status == "200", let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let nodes = object["nodes"] as? [[String: Any]]
        else { return ([], -1, "\(answer)") }
        let listed = nodes.map { node in
            Listed(
                nodeId: node["nodeId"] as? String ?? "?", isSelf: node["self"] as? Bool ?? false, ready: node["ready"] as? Bool ?? false,
                appSessions: (node["app"] as? [String: Any])?["sessions"] as? Int ?? -1)
        }
        let across = ((object["app"] as? [String: Any])?["acrossNodes"] as? [String: Any])?["sessions"] as? Int ?? -1
        return (listed, across, answer.body)
    }

    @Test func infoFromEitherNodeListsBothAndAKilledNodeDropsOutWithinThreeBeats() async throws {
        let directory = temporaryDataDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("api-keys")
        try "\(Self.key)\n".write(to: keyFile, atomically: true, encoding: .utf8)
        try await RedisServer.with { redis in
            var nodes: [ServeProcess] = []
            for index in 1...2 {
                nodes.append(
                    try await ServeProcess.start(
                        dataDirectory: directory.appendingPathComponent("node-\(index)"), apiKeyFile: keyFile,
                        ["--cluster", "redis://127.0.0.1:\(redis.port)", "--node-id", "node-\(index)"]))
            }
            let admins = try nodes.map { try #require($0.adminPort) }
            let group = try EventLoopGroup(threads: 1)
            let alice = try await RawClient.connect(to: nodes[1].url, group: group)
            #expect(await alice.login("alice")?.errorCode == nil)

            // Either node lists both, itself marked, node 2 with alice's session, summed once.
            for (index, admin) in admins.enumerated() {
                let expected = [
                    Listed(nodeId: "node-1", isSelf: index == 0, ready: true, appSessions: 0),
                    Listed(nodeId: "node-2", isSelf: index == 1, ready: true, appSessions: 1),
                ]
                let last = try await info(admin) { $0.nodes == expected && $0.acrossNodes == 1 }
                #expect(last.nodes == expected && last.acrossNodes == 1, "node-\(index + 1): \(last.nodes), across \(last.acrossNodes): \(last.text)")
            }

            // Killed: gone from node 1's list once its record expires, three beats (3 s) after its
            // last beat at most, so within 3 s of the kill and the time a call takes.
            try await nodes[1].kill9()
            let killed = ContinuousClock.now
            let last = try await info(admins[0]) { $0.nodes.map(\.nodeId) == ["node-1"] }
            let after = ContinuousClock.now - killed
            #expect(last.nodes.map(\.nodeId) == ["node-1"], "\(last.nodes): \(last.text)")
            #expect(last.acrossNodes == 0, "\(last.text)")
            #expect(after < .seconds(6), "node 2 dropped out \(after) after its kill")
            print("node 2 dropped out of node 1's info \(after) after its kill")
            alice.connection.close()
            try await nodes[0].stop()
            try await BlockingWork.run { group.shutdown() }
        }
    }
}
