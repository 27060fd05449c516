import Foundation
import Testing
import SwitchboardTestKit

/// Three `switchboard serve --cluster` processes on one real redis-server, checked by the Python
/// peer written from docs/PROTOCOL.md: clients on different nodes see one service.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ClusterProcessTests {
    /// Starts `count` nodes of a cluster on `redis`, each with a data directory of its own (in
    /// `directories`, for the caller to remove).
    func startNodes(_ count: Int, on redis: RedisServer, directories: inout [URL]) async throws -> [ServeProcess] {
        var nodes: [ServeProcess] = []
        for index in 1...count {
            let directory = temporaryDataDirectory()
            directories.append(directory)
            nodes.append(
                try await ServeProcess.start(
                    dataDirectory: directory,
                    ["--cluster", "redis://127.0.0.1:\(redis.port)", "--node-id", "node-\(index)"]))
        }
        return nodes
    }

    func peer(_ nodes: [ServeProcess]) async throws -> (status: Int32, text: String) {
        try await ProcessRunner.python("peer_cluster.py", nodes.flatMap { ["--url", $0.url] })
    }

    @Test func clientsOnThreeNodesSeeOneService() async throws {
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        try await RedisServer.with { redis in
            let nodes = try await startNodes(3, on: redis, directories: &directories)
            let output = try await peer(nodes)
            for node in nodes { try await node.stop() }
            #expect(output.status == 0, "\(output.text)")
            #expect(output.text.contains(" 0 failed"), "\(output.text)")
        }
    }

    @Test func theNodesLeftCarryOnWhenOneIsKilled() async throws {
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        try await RedisServer.with { redis in
            let nodes = try await startNodes(3, on: redis, directories: &directories)
            try await nodes[2].kill9()
            let output = try await peer(Array(nodes[0..<2]))
            for node in nodes[0..<2] { try await node.stop() }
            #expect(output.status == 0, "\(output.text)")
            #expect(output.text.contains(" 0 failed"), "\(output.text)")
        }
    }

    @Test func aNodeWhoseRedisCannotBeReachedDoesNotStart() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A port nothing listens on: the kernel's pick, released at once.
        let port = try await RedisServer.with { $0.port }
        let output = try await ProcessRunner.run(
            ExecutableTests.executable.path,
            ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "off", "--data-dir", directory.path,
             "--cluster", "redis://127.0.0.1:\(port)"],
            timeout: .seconds(60))
        #expect(output.status != 0)
        #expect(output.text.contains("127.0.0.1:\(port)"), "\(output.text)")
    }
}
