import Foundation
import SwitchboardTestKit

/// A running `switchboard serve` and the URL it printed.
struct ServeProcess {
    let process: Process
    let url: String
    let errors: Pipe

    /// Starts `switchboard serve` on a free port with `dataDirectory` and `extra` options, logging
    /// at `logLevel` (nil: as the other options and the environment say).
    static func start(dataDirectory: URL, _ extra: [String] = [], logLevel: String? = "warning") async throws -> ServeProcess {
        let process = Process()
        process.executableURL = ExecutableTests.executable
        process.arguments =
            ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "off", "--data-dir", dataDirectory.path, "--no-rate-limits"]
            + (logLevel.map { ["--log-level", $0] } ?? []) + extra
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
