import Foundation

/// Runs helper programs (Python peers, tools) from tests, bounded in time.
public enum ProcessRunner {
    /// The repository's top folder, for tests that run its `tools/`.
    public static func repositoryRoot(from filePath: String = #filePath) -> URL {
        var url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }

    /// Runs `program` with `arguments` to its end, or stops it after `timeout`; returns the exit
    /// status and everything it wrote to standard output and error.
    public static func run(
        _ program: String, _ arguments: [String], timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Read on a thread of its own: a blocked executor thread would stall in-process servers.
        let handle = pipe.fileHandleForReading
        let reader = Task { try await BlockingWork.run { handle.readDataToEndOfFile() } }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let data = try await reader.value
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs `tools/<script>` of this repository with `python3`.
    public static func python(_ script: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> (status: Int32, text: String)
    {
        let path = repositoryRoot().appendingPathComponent("tools").appendingPathComponent(script).path
        return try await run("/usr/bin/env", ["python3", path] + arguments, timeout: timeout)
    }
}
