import Foundation
import Testing
import SwitchboardClient
import SwitchboardTestKit

/// The `switchboard` executable as an operator meets it: strict options, `config check`'s exit
/// codes, SIGHUP reloading the configuration file, JSON log lines with request ids, and the
/// command-line client against a running server.
@Suite(.timeLimit(.minutes(3))) struct CommandLineProcessTests {
    static func switchboard(_ arguments: [String]) async throws -> (status: Int32, text: String) {
        try await ProcessRunner.run(ExecutableTests.executable.path, arguments, timeout: .seconds(30))
    }

    static let unknownOptions: [(arguments: [String], typed: String, meant: String)] = [
        (["serve", "--clustr", "redis://127.0.0.1:6379"], "--clustr", "--cluster"),
        (["serve", "--data-dri", "/tmp/x"], "--data-dri", "--data-dir"),
        (["token", "--app-idd", "a"], "--app-idd", "--app-id"),
        (["ws-echo", "--lissten", "127.0.0.1:0"], "--lissten", "--listen"),
        (["config", "show", "--log-levle", "debug"], "--log-levle", "--log-level"),
        (["client", "pub", "room", "hi", "--app-id", "a", "--urll", "ws://127.0.0.1:1"], "--urll", "--url"),
    ]

    @Test(arguments: unknownOptions.indices) func everyCommandRefusesAnUnknownOptionWithExitCode2(_ index: Int) async throws {
        let (arguments, typed, meant) = Self.unknownOptions[index]
        let result = try await Self.switchboard(arguments)
        #expect(result.status == 2, "\(result.text)")
        #expect(result.text.contains("unknown option '\(typed)'"), "\(result.text)")
        #expect(result.text.contains("did you mean \(meant)?"), "\(result.text)")
    }

    @Test func aMissingValueOrAnUnknownOptionFarFromAnyIsExitCode2() async throws {
        let missing = try await Self.switchboard(["serve", "--listen"])
        #expect(missing.status == 2 && missing.text.contains("--listen needs a value"), "\(missing.text)")
        let bogus = try await Self.switchboard(["serve", "--bogus", "1"])
        #expect(bogus.status == 2 && bogus.text.contains("unknown option '--bogus'"), "\(bogus.text)")
    }

    @Test func configCheckExitsZeroForAGoodFileAndOneNamingEachMistake() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let defaults = try await Self.switchboard(["config", "default"])
        #expect(defaults.status == 0)
        let good = directory.appendingPathComponent("good.json").path
        try defaults.text.write(toFile: good, atomically: true, encoding: .utf8)
        let passed = try await Self.switchboard(["config", "check", good])
        #expect(passed.status == 0 && passed.text == "\(good): ok\n", "\(passed.text)")
        let bad = directory.appendingPathComponent("bad.json").path
        try "{\n  \"listen\": 9100,\n  \"maxFrames\": 5\n}\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let failed = try await Self.switchboard(["config", "check", bad])
        #expect(failed.status == 1)
        #expect(failed.text.contains("\(bad):2: key \"listen\" takes a string"), "\(failed.text)")
        #expect(failed.text.contains("\(bad):3: key \"maxFrames\" is not a setting; did you mean \"maxFramesPerSecond\"?"), "\(failed.text)")
    }

    @Test func sighupReloadsTheLogLevelAndNamesWhatWaitsForARestart() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("switchboard.json").path
        try #"{"logLevel": "info", "logFormat": "json", "maxFramesPerSecond": 300}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let serve = try await ServeProcess.start(dataDirectory: directory, ["--config", file], logLevel: nil)
        defer { kill(serve.process.processIdentifier, SIGKILL) }
        let errors = serve.errors.fileHandleForReading
        let started = try await Self.readLogLine(errors) { $0["message"]?.hasPrefix("switchboard listening") == true }
        #expect(started["level"] == "info" && started["module"] == "server")

        try #"{"logLevel": "debug", "logFormat": "json", "maxFramesPerSecond": 50}"#.write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        let applied = try await Self.readLogLine(errors) { $0["message"]?.hasPrefix("reload: log-level") == true }
        #expect(applied["message"] == "reload: log-level info → debug")
        let waiting = try await Self.readLogLine(errors) { $0["message"]?.hasPrefix("reload: changed but") == true }
        #expect(waiting["message"] == "reload: changed but applied only at the next start: max-frames-per-second")

        // Debug lines now come, with the request id the SDK sent.
        let config = RtmClientConfig(appId: "ops", userId: "olivia")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [serve.url]
        let client = try RtmClientKit(config, delegate: nil)
        #expect(await client.login("").1 == nil)
        #expect(await RtmRequestTrace.$current.withValue("deploy-7") { await client.subscribe(channelName: "ops", option: nil) }.1 == nil)
        let traced = try await Self.readLogLine(errors) { $0["requestId"] == "deploy-7" }
        #expect(traced["message"] == "subscribe ok" && traced["level"] == "debug")
        #expect(traced["app"] == "ops" && traced["user"] == "olivia" && traced["channel"] == "ops" && traced["session"] != nil)
        _ = client.destroy()

        // A file that no longer reads keeps the settings in force.
        try "{\"logLevel\": 3}".write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        let refused = try await Self.readLogLine(errors) { $0["message"]?.hasPrefix("reload: ") == true && $0["level"] == "error" }
        #expect(refused["message"]?.contains("key \"logLevel\" takes one of debug, info") == true, "\(refused)")

        // Webhook receivers named now have no module to go to: the server started without one.
        try #"{"logFormat": "json", "webhookSecretFile": "/nonexistent/secret", "apps": {"ops": {"webhookUrls": ["http://127.0.0.1:1/h"]}}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        let webhooks = try await Self.readLogLine(errors) { $0["message"]?.hasPrefix("reload: the webhooks") == true }
        #expect(webhooks["message"] == "reload: the webhooks do not run (the server started without a receiver): their receivers take a restart")
        try await serve.stop()
    }

    /// The names of the event-loop threads of process `pid` (`sb-loop-N`, as /proc shows them).
    static func eventLoopThreads(of pid: Int32) throws -> [String] {
        let tasks = "/proc/\(pid)/task"
        return try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { task in
            let name = try String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return name.hasPrefix("sb-loop-") ? name : nil
        }.sorted()
    }

    @Test func aServerPinnedToOneCoreRunsOneEventLoopAndServes() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let taskset = "/usr/bin/taskset"
        try #require(FileManager.default.isExecutableFile(atPath: taskset), "taskset (util-linux) is needed")
        // The first processor this process may run on (a container's cpuset need not hold 0).
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let allowed = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        let first = try #require(allowed.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
            .split(whereSeparator: { $0 == "-" || $0 == "," }).first.flatMap { Int($0) })
        let serve = try await ServeProcess.start(dataDirectory: directory, launcher: [taskset, "-c", String(first)])
        defer { kill(serve.process.processIdentifier, SIGKILL) }

        // Two users on the one loop still reach each other.
        var clients: [RtmClientKit] = []
        for user in ["ana", "ben"] {
            let config = RtmClientConfig(appId: "pinned", userId: user)
            config.privateConfig = RtmPrivateConfig()
            config.privateConfig?.accessPointHosts = [serve.url]
            let client = try RtmClientKit(config, delegate: nil)
            #expect(await client.login("").1 == nil)
            clients.append(client)
        }
        let events = clients[0].events
        let received = Task { () -> RtmMessageEvent? in
            for await event in events { if case .message(let message) = event { return message } }
            return nil
        }
        let toUser = RtmPublishOptions()
        toUser.channelType = .user
        #expect(await clients[1].publish(channelName: "ana", message: "on one core", option: toUser).1 == nil)
        let message = await received.value
        #expect(message?.message.stringData == "on one core" && message?.publisher == "ben" && message?.channelType == .user)
        // Read once the loops have served: a loop thread names itself when it first runs, which
        // on a busy machine may come after the listener is open.
        #expect(try Self.eventLoopThreads(of: serve.process.processIdentifier) == ["sb-loop-0"])
        for client in clients { _ = client.destroy() }
        try await serve.stop()
    }

    @Test func theClientPublishesAndReadsMetadataThroughTheExecutable() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await ServeProcess.start(dataDirectory: directory)
        defer { kill(serve.process.processIdentifier, SIGKILL) }
        let common = ["--url", serve.url, "--app-id", "demo"]
        let published = try await Self.switchboard(["client", "pub", "room", "hello"] + common)
        #expect(published.status == 0 && published.text == "published on room\n", "\(published.text)")
        let set = try await Self.switchboard(["client", "meta", "set", "room", "topic", "launch"] + common)
        #expect(set.status == 0, "\(set.text)")
        let read = try await Self.switchboard(["client", "meta", "get", "room", "topic", "--json"] + common)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(read.text.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.first?["value"] as? String == "launch")
        try await serve.stop()
    }

    /// Reads JSON log lines from `handle` until one satisfies `matches` (lines that are not JSON
    /// objects of strings are skipped).
    static func readLogLine(_ handle: FileHandle, _ matches: @escaping @Sendable ([String: String]) -> Bool) async throws -> [String: String] {
        try await BlockingWork.run {
            while true {
                let line = BlockingWork.readLine(handle)
                if line.isEmpty { throw CocoaError(.fileReadUnknown) }
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] else { continue }
                if matches(object) { return object }
            }
        }
    }
}
