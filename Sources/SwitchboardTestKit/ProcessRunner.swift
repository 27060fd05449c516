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
        _ program: String, _ arguments: [String], timeout: Duration = .seconds(180)
    ) async throws -> (status: Int32, text: String) {
        // Read on a thread of its own: a blocked executor thread would stall in-process servers.
        try await BlockingWork.run { try ChildProcesses.runCaptured(program, arguments, timeout: timeout) }
    }

    /// Runs `tools/<script>` of this repository with the interpreter `tools/test.sh` sets up:
    /// `SWITCHBOARD_PYTHON`, else the repository's `.venv/bin/python3`, else `python3` on PATH.
    /// When no interpreter runs, the output says to run `tools/test.sh`.
    public static func python(_ script: String, _ arguments: [String], timeout: Duration = .seconds(180)) async throws
        -> (status: Int32, text: String)
    {
        let root = repositoryRoot()
        let path = root.appendingPathComponent("tools").appendingPathComponent(script).path
        let venv = root.appendingPathComponent(".venv/bin/python3").path
        let interpreter =
            ProcessInfo.processInfo.environment["SWITCHBOARD_PYTHON"]
            ?? (FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3")
        let result = try await run("/usr/bin/env", [interpreter, path] + arguments, timeout: timeout)
        guard result.status == 127 else { return result }
        return (result.status, result.text + "no Python interpreter (\(interpreter)): run tools/test.sh\n")
    }
}
