import Foundation
import Testing
import SwitchboardServer
import SwitchboardTesting

/// An independent client, written in Python from docs/PROTOCOL.md alone, against a live server.
@Suite struct PythonPeerTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func thePythonPeerPassesItsSelfCheck() async throws {
        let server = try await TestServer.start()
        let output = try await Self.run(
            "/usr/bin/env", ["python3", Self.repositoryRoot.appendingPathComponent("tools/peer.py").path, "--url", server.url])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("0 failed"), "\(output.text)")
    }

    /// Runs a program to its end (at most 60 s) and returns its exit status and output.
    static func run(_ program: String, _ arguments: [String]) async throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Read on a dispatch thread: a blocked cooperative thread would stall the server's actors.
        let handle = pipe.fileHandleForReading
        let reader = Task { try await BlockingWork.run { handle.readDataToEndOfFile() } }
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let data = try await reader.value
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
