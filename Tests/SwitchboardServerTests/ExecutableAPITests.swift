import Foundation
import Testing
import SwitchboardTestKit

/// `switchboard serve --api-key-file`: the keys open the API, and SIGHUP reads the file again.
extension ExecutableTests {
    @Test func sighupReloadsTheAPIKeyFile() async throws {
        let directory = temporaryDataDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("api-keys")
        let (old, new) = ("old-api-key-0123456789", "new-api-key-0123456789")
        try "# keys\n\(old)\n".write(to: keyFile, atomically: true, encoding: .utf8)
        let (process, _, errors) = try Self.launch([
            "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", directory.appendingPathComponent("data").path,
            "--api-key-file", keyFile.path, "--log-level", "info",
        ])
        defer { if process.isRunning { process.terminate() } }
        // The admin listener's port is in the log: "[info] admin listener on http://127.0.0.1:PORT".
        let handle = errors.fileHandleForReading
        let adminLine = try await BlockingWork.run {
            for _ in 0..<20 {
                let line = BlockingWork.readLine(handle)
                if line.contains("admin listener on") || line.isEmpty { return line }
            }
            return ""
        }
        let admin = try #require(adminLine.split(separator: ":").last.flatMap { Int($0) }, "\(adminLine)")

        func status(with key: String) async throws -> String {
            try await ServerAPITests.call(admin, "info", key: key, "{\"appId\": \"demo\"}").status
        }
        #expect(try await status(with: old) == "200")
        #expect(try await status(with: new) == "401")
        try "\(new)\n".write(to: keyFile, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        var answered = ""
        let deadline = ContinuousClock.now + Patience.standard
        repeat {
            answered = try await status(with: new)
        } while answered != "200" && ContinuousClock.now < deadline
        #expect(answered == "200")
        #expect(try await status(with: old) == "401")
        // A file that no longer holds a key leaves the keys in force, and the server running.
        try "\n".write(to: keyFile, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(try await status(with: new) == "200")
        #expect(process.isRunning)

        kill(process.processIdentifier, SIGTERM)
        #expect(await eventually { !process.isRunning })
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
