import Foundation
import Testing
import SwitchboardTestKit
import SwitchboardTransport

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

    func peer(_ nodes: [ServeProcess], _ script: String = "peer_cluster.py") async throws -> (status: Int32, text: String) {
        try await ProcessRunner.python(script, nodes.flatMap { ["--url", $0.url] })
    }

    /// Channel and user messages across three nodes, and the same user id logging in on a second
    /// node replacing its first session, from PROTOCOL.md alone.
    @Test func clientsOnThreeNodesSeeOneService() async throws {
        let output = try await checkThreeNodes(with: "peer_cluster.py")
        #expect(output.contains("ok   the first session, on node 1, is told 27 (sameUidLogin)"), "\(output)")
    }

    /// Metadata across three nodes, from PROTOCOL.md §13 alone.
    @Test
    func metadataOnThreeNodes() async throws {
        try await checkThreeNodes(with: "peer_cluster_storage.py")
    }

    @Test
    func locksOnThreeNodes() async throws {
        try await checkThreeNodes(with: "peer_cluster_lock.py")
    }

    /// Presence across three nodes, from PROTOCOL.md §12 alone.
    @Test
    func presenceOnThreeNodes() async throws {
        try await checkThreeNodes(with: "peer_cluster_presence.py")
    }

    /// Stream channels and topics across three nodes, from PROTOCOL.md §11 alone.
    @Test
    func streamChannelsOnThreeNodes() async throws {
        try await checkThreeNodes(with: "peer_cluster_stream.py")
    }

    /// Runs the Python check `script` against three nodes of one cluster; returns its report.
    @discardableResult
    private func checkThreeNodes(with script: String) async throws -> String {
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        return try await RedisServer.with { redis in
            let nodes = try await startNodes(3, on: redis, directories: &directories)
            let output = try await peer(nodes, script)
            for node in nodes { try await node.stop() }
            #expect(output.status == 0, "\(output.text)")
            #expect(output.text.contains(" 0 failed"), "\(output.text)")
            return output.text
        }
    }

    @Test func answeredMetadataWritesSurviveAKilledNodeAndAKilledRedisThatSyncsEveryWrite() async throws {
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        try await RedisServer.with(["--appendonly", "yes", "--appendfsync", "always"]) { redis in
            let nodes = try await startNodes(3, on: redis, directories: &directories)
            let group = try EventLoopGroup(threads: 1)
            // Writers on node 1, each writing its own set again and again, until node 1 is killed.
            let writers = 4
            let progress = AnsweredWrites(writers)
            let runs = (0..<writers).map { writer in
                Task { await writeUntilCut(writer, from: 0, to: nodes[0].url, group: group, progress: progress) }
            }
            // Killed mid-write: once every writer has had an answer, and not before 300 ms of writing.
            let earliest = ContinuousClock.now + .milliseconds(300)
            #expect(await eventually { progress.everyWriterAnswered && ContinuousClock.now >= earliest })
            try await nodes[0].kill9()
            var answered: [Int] = []
            for run in runs { answered.append(await run.value) }
            try await expectWrites(answered, on: nodes[1].url, group: group, after: "node 1 was killed")
            try await redis.kill()
            try await redis.start()
            try await expectWrites(answered, on: nodes[2].url, group: group, after: "Redis was killed")
            for node in nodes[1...] { try await node.stop() }
            group.shutdown()
        }
    }

    /// Expects each writer's set, read on the node at `url`, to hold its last answered write (or a
    /// later one whose answer was cut), both items alike. After a restart of Redis the node
    /// reaches it again within its reconnection backoff: until then a login or a read fails, and
    /// is tried again.
    func expectWrites(_ answered: [Int], on url: String, group: EventLoopGroup, after event: String) async throws {
        var logged: RawClient?
        let deadline = ContinuousClock.now + Patience.standard
        while logged == nil, ContinuousClock.now < deadline {
            let client = try await RawClient.connect(to: url, group: group)
            if let answer = await client.login("checker"), answer.errorCode == nil {
                logged = client
            } else {
                client.connection.close()
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        guard let checker = logged else {
            Issue.record("no login on \(url) after \(event)")
            return
        }
        var id: UInt32 = 10
        func read(_ writer: Int) async -> [String: String]? {
            id += 1
            return await checker.storage(id, .getUser(userId: "writer-\(writer)"))?.metadata?.values
        }
        while await read(0) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        for (writer, last) in answered.enumerated() {
            let values = await read(writer) ?? [:]
            #expect(last > 0, "writer \(writer) had no answer")
            #expect(values["a"] == values["b"] && (Int(values["a"] ?? "") ?? -1) >= last, "after \(event), writer \(writer) answered \(last): \(values)")
        }
        checker.connection.close()
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

    /// Node 1 killed (SIGKILL) while its client holds a lock that a client of node 2 waits for:
    /// the other nodes reap it and the waiter gets the lock once its ttl ran from node 1's last
    /// beat (`peer_cluster_lock.py --kill-first-node`, which states and checks the bound).
    @Test func aKilledHoldersLockGoesToAWaiterOnAnotherNodeAfterItsTtl() async throws {
        let output = try await lockPeerWithFirstNode("--kill-first-node")
        #expect(output.contains("the waiter on another node got the lock"), "\(output)")
    }

    /// Node 1 paused (SIGSTOP) past its liveness record while its client holds a lock: the
    /// others reap it; once awake it ends its sessions and the waiter on node 2 gets the lock
    /// (`peer_cluster_lock.py --pause-first-node`).
    @Test func aPausedHoldersNodeWakesReapedAndEndsItsSessions() async throws {
        let output = try await lockPeerWithFirstNode("--pause-first-node")
        #expect(output.contains("once awake, the reaped node ends its session"), "\(output)")
    }

    /// Node 1 killed (kill -9) under a client subscribed with presence and a state: the client
    /// logs in on node 2 with its resume ticket and goes on with the same session, its channel and
    /// state kept, nobody told it left (`peer_cluster_resume.py`, from PROTOCOL.md §2.4).
    @Test func aClientOfAKilledNodeResumesItsSessionOnAnotherNode() async throws {
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        try await RedisServer.with { redis in
            let nodes = try await startNodes(3, on: redis, directories: &directories)
            let output = try await ProcessRunner.python(
                "peer_cluster_resume.py", nodes.flatMap { ["--url", $0.url] } + ["--kill-first-node", "\(nodes[0].process.processIdentifier)"])
            for node in nodes { try await node.stop() }
            #expect(output.status == 0, "\(output.text)")
            #expect(output.text.contains(" 0 failed"), "\(output.text)")
        }
    }

    /// Runs the lock peer against three nodes, handing it node 1's process id with `option`;
    /// returns its report (and prints its timing lines).
    private func lockPeerWithFirstNode(_ option: String) async throws -> String {
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        return try await RedisServer.with { redis in
            let nodes = try await startNodes(3, on: redis, directories: &directories)
            let output = try await ProcessRunner.python(
                "peer_cluster_lock.py", nodes.flatMap { ["--url", $0.url] } + [option, "\(nodes[0].process.processIdentifier)"])
            kill(nodes[0].process.processIdentifier, SIGCONT)
            for node in nodes { try await node.stop() }
            #expect(output.status == 0, "\(output.text)")
            #expect(output.text.contains(" 0 failed"), "\(output.text)")
            print(output.text.split(separator: "\n").filter { $0.contains(" s after") || $0.contains(" s later") }.joined(separator: "\n"))
            return output.text
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
