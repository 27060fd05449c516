import Foundation
import Testing
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// `switchboard serve` as a child process, killed with SIGKILL: every write it answered is there
/// when it starts again on the same data directory.
@Suite(.serialized, .timeLimit(.minutes(5))) struct StorageCrashTests {
    /// Runs `switchboard serve` expecting it to fail at startup; returns its status and stderr.
    func failingServe(_ dataDirectory: URL, _ extra: [String] = []) async throws -> (status: Int32, text: String) {
        try await ProcessRunner.run(
            ExecutableTests.executable.path,
            ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "off", "--data-dir", dataDirectory.path] + extra, timeout: .seconds(20))
    }

    @Test func anAnsweredWriteSurvivesSIGKILL() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let group = try EventLoopGroup(threads: 1)
        let first = try await ServeProcess.start(dataDirectory: directory)
        let writer = try await RawClient.connect(to: first.url, group: group)
        _ = await writer.login("alice")
        #expect(await writer.storage(2, .setChannel("room", [("answered", "yes")])) == .ok(id: 2))
        try await first.kill9()

        let second = try await ServeProcess.start(dataDirectory: directory)
        let reader = try await RawClient.connect(to: second.url, group: group)
        _ = await reader.login("bob")
        #expect(await reader.storage(2, .getChannel(channelType: .message, channel: "room"))?.metadata?.values == ["answered": "yes"])
        reader.connection.close()
        try await second.stop()
        group.shutdown()
    }

    @Test func cyclesOfSIGKILLUnderConcurrentWritersLoseNothingAnswered() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let group = try EventLoopGroup(threads: 1)
        let writers = 4
        var answered = Array(repeating: 0, count: writers)
        for cycle in 0..<4 {
            let server = try await ServeProcess.start(dataDirectory: directory)
            // Each writer's set as the restarted server has it: both items always equal (a write
            // is atomic) and never behind the last answered write.
            let checker = try await RawClient.connect(to: server.url, group: group)
            _ = await checker.login("checker")
            for writer in 0..<writers {
                let stored = await checker.storage(UInt32(10 + writer), .getUser(userId: "writer-\(writer)"))?.metadata
                let values = stored?.values ?? [:]
                let a = Int(values["a"] ?? "0") ?? -1
                #expect(values["a"] == values["b"], "cycle \(cycle) writer \(writer): \(values)")
                #expect(a >= answered[writer], "cycle \(cycle) writer \(writer): stored \(a), answered \(answered[writer])")
                answered[writer] = a
            }
            checker.connection.close()
            let start = answered
            let url = server.url
            // Writes answered in this cycle, per writer, so the kill waits for every writer to be under way.
            let progress = AnsweredWrites(writers)
            let runs = (0..<writers).map { writer in
                Task { await writeUntilCut(writer, from: start[writer], to: url, group: group, progress: progress) }
            }
            // Killed mid-write: once every writer has had an answer (a loaded machine may take a
            // while to get there; bounded) and the cycle's time has passed.
            let earliest = ContinuousClock.now + .milliseconds(150 + 100 * cycle)
            let latest = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < latest,
                ContinuousClock.now < earliest || !progress.everyWriterAnswered {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await server.kill9()
            for (writer, run) in runs.enumerated() { answered[writer] = await run.value }
            #expect(zip(answered, start).allSatisfy { $0 > $1 }, "cycle \(cycle): a writer got no answer: \(start) → \(answered)")
        }
        let last = try await ServeProcess.start(dataDirectory: directory)
        let checker = try await RawClient.connect(to: last.url, group: group)
        _ = await checker.login("checker")
        for writer in 0..<writers {
            let values = await checker.storage(UInt32(10 + writer), .getUser(userId: "writer-\(writer)"))?.metadata?.values ?? [:]
            #expect((Int(values["a"] ?? "") ?? -1) >= answered[writer] && values["a"] == values["b"], "writer \(writer): \(values)")
        }
        checker.connection.close()
        try await last.stop()
        group.shutdown()
    }

    @Test func sealedValuesNeverReachTheDiskInTheClearAndNeedTheirKey() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("storage.key")
        try Data((String(repeating: "3c", count: 32) + "\n").utf8).write(to: keyFile)
        let otherKey = directory.appendingPathComponent("other.key")
        try Data(repeating: 0x11, count: 32).write(to: otherKey)
        let data = directory.appendingPathComponent("data")
        let secret = "the-secret-value-\(UUID())"

        let group = try EventLoopGroup(threads: 1)
        let first = try await ServeProcess.start(dataDirectory: data, ["--storage-key-file", keyFile.path])
        let writer = try await RawClient.connect(to: first.url, group: group)
        _ = await writer.login("alice")
        #expect(await writer.storage(2, .setUser("alice", [("secret", secret)])) == .ok(id: 2))
        try await first.kill9()
        for file in try FileManager.default.contentsOfDirectory(atPath: data.path) {
            let bytes = try Data(contentsOf: data.appendingPathComponent(file))
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the value in the clear")
        }

        let wrong = try await failingServe(data, ["--storage-key-file", otherKey.path])
        #expect(wrong.status == 1 && wrong.text.contains("metadata.sqlite") && wrong.text.contains("storage key"), "\(wrong.text)")
        let none = try await failingServe(data)
        #expect(none.status == 1 && none.text.contains("metadata.sqlite") && none.text.contains("sealed"), "\(none.text)")

        let second = try await ServeProcess.start(dataDirectory: data, ["--storage-key-file", keyFile.path])
        let reader = try await RawClient.connect(to: second.url, group: group)
        _ = await reader.login("bob")
        #expect(await reader.storage(2, .getUser(userId: "alice"))?.metadata?.values == ["secret": secret])
        reader.connection.close()
        try await second.stop()
        group.shutdown()
    }

    @Test func serveRefusesADamagedDatabaseNamingTheFile() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("metadata.sqlite")
        try Data(repeating: 0x42, count: 4096).write(to: file)
        let result = try await failingServe(directory)
        #expect(result.status == 1 && result.text.contains(file.path), "\(result.text)")
        let badKey = directory.appendingPathComponent("short.key")
        try Data("nope".utf8).write(to: badKey)
        let key = try await failingServe(temporaryDataDirectory(), ["--storage-key-file", badKey.path])
        #expect(key.status == 1 && key.text.contains(badKey.path), "\(key.text)")
    }
}
