import Foundation
import SwitchboardTestKit

/// A running `switchboard serve` and the URL it printed.
struct ServeProcess {
    let process: Process
    let url: String
    let errors: Pipe
    /// The admin listener's port, when started with the server API.
    var adminPort: Int?

    /// Starts `switchboard serve` on a free port with `dataDirectory` and `extra` options, logging
    /// at `logLevel` (nil: as the other options and the environment say).
    /// `launcher` runs it through another program first (`["/usr/bin/taskset", "-c", "0"]`),
    /// which must exec it under its own process id.
    static func start(
        dataDirectory: URL, _ extra: [String] = [], logLevel: String? = "warning", launcher: [String] = []
    ) async throws -> ServeProcess {
        try await launch(
            ["--admin-listen", "off"] + (logLevel.map { ["--log-level", $0] } ?? []) + extra, dataDirectory: dataDirectory,
            launcher: launcher)
    }

    /// Starts `switchboard serve` as `start` does, with the admin listener on a free port and the
    /// server API opened by the keys in `apiKeyFile`. The port is read from the log (at `info`),
    /// which is then read on to its end on a thread of its own, so the server never waits for a
    /// full pipe.
    static func start(dataDirectory: URL, apiKeyFile: URL, _ extra: [String] = []) async throws -> ServeProcess {
        var serve = try await launch(
            ["--admin-listen", "127.0.0.1:0", "--api-key-file", apiKeyFile.path, "--log-level", "info"] + extra,
            dataDirectory: dataDirectory)
        let handle = serve.errors.fileHandleForReading
        // "[info] admin listener on http://127.0.0.1:PORT", logged before the URL was printed.
        let line = try await BlockingWork.run {
            var line = BlockingWork.readLine(handle)
            while !line.isEmpty, !line.contains("admin listener on") { line = BlockingWork.readLine(handle) }
            return line
        }
        serve.adminPort = line.split(separator: ":").last.flatMap { Int($0) }
        let drain = Thread { while !handle.readData(ofLength: 4096).isEmpty {} }
        drain.name = "switchboard-test-serve-log"
        drain.start()
        return serve
    }

    private static func launch(_ options: [String], dataDirectory: URL, launcher: [String] = []) async throws -> ServeProcess {
        let process = Process()
        let serve = ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory.path, "--no-rate-limits"] + options
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(launcher.dropFirst()) + [ExecutableTests.executable.path] + serve
        } else {
            process.executableURL = ExecutableTests.executable
            process.arguments = serve
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try ChildProcesses.start(process)
        let handle = output.fileHandleForReading
        let url = try await BlockingWork.run { BlockingWork.readLine(handle) }
        return ServeProcess(process: process, url: url, errors: errors)
    }

    /// SIGKILL, and wait for the process to be gone.
    func kill9() async throws {
        kill(process.processIdentifier, SIGKILL)
        let process = process
        try await BlockingWork.run { process.waitUntilExit() }
    }

    /// SIGTERM, and wait.
    func stop() async throws {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let process = process
        try await BlockingWork.run { process.waitUntilExit() }
    }
}
