import Foundation
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardTesting
import SwitchboardTestKit

/// `switchboard serve` as an operator runs it: one line with its URL, graceful on SIGTERM.
@Suite(.timeLimit(.minutes(5))) struct ExecutableTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("switchboard")
    }

    /// Starts the executable with `arguments`, its output and errors each on a pipe.
    static func launch(_ arguments: [String]) throws -> (process: Process, output: Pipe, errors: Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try ChildProcesses.start(process)
        return (process, output, errors)
    }

    @Test func servePrintsItsURLAndStopsGracefullyOnSIGTERM() async throws {
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-test-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDirectory) }
        let (process, output, errors) = try Self.launch(
            ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "off", "--data-dir", dataDirectory.path, "--log-level", "info"])
        defer { if process.isRunning { process.terminate() } }

        // Read on a thread of its own: a blocked executor thread would stall in-process servers.
        let handle = output.fileHandleForReading
        let url = try await BlockingWork.run { BlockingWork.readLine(handle) }
        #expect(url.hasPrefix("ws://127.0.0.1:"), "printed \(url.debugDescription)")
        #expect(FileManager.default.fileExists(atPath: dataDirectory.path))

        let config = RtmClientConfig(appId: "app", userId: "operator")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [url]
        let client = try RtmClientKit(config, delegate: nil)
        let events = client.events
        let sawDisconnect = Task {
            for await event in events {
                if case .linkState(let change) = event, change.currentState == .disconnected { return true }
            }
            return false
        }
        #expect(await client.login("").1 == nil)

        kill(process.processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!process.isRunning)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("stopped"), "\(log)")
        #expect(await sawDisconnect.value)
        client.destroy()
    }

    @Test func tokenMintsA007TokenTheServerAccepts() async throws {
        let appId = "970CA35de60c44645bbae8a215061b33", certificate = "5CFd2fd1755d40ecb72977518be15d3b"
        let output = try await ProcessRunner.run(
            Self.executable.path,
            ["token", "--app-id", appId, "--app-certificate", certificate, "--user-id", "alice", "--expire", "600"])
        #expect(output.status == 0)
        let token = output.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("007"))
        let verifier = TokenVerifier(credentials: [appId: certificate])
        let now = UInt64(Date().timeIntervalSince1970)
        let grant = try verifier.verifyLogin(token: token, appId: appId, userId: "alice", now: now)
        let expiresAt = try #require(grant.loginExpiresAt)
        #expect(expiresAt >= now + 590 && expiresAt <= now + 610)
        #expect(throws: RtmError.self) { try verifier.verifyLogin(token: token, appId: appId, userId: "bob", now: now) }
    }

    @Test func aBusyPortEndsServeWithAnError() async throws {
        let server = try await TestServer.start()
        let port = try #require(server.port)
        let output = try await ProcessRunner.run(
            Self.executable.path, ["serve", "--listen", "127.0.0.1:\(port)", "--admin-listen", "off", "--data-dir", temporaryDataDirectory().path],
            timeout: .seconds(20))
        #expect(output.status == 1, "\(output.text)")
        await server.shutdown()
    }

    @Test func badFlagsAreRefusedWithAUsageError() async throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--listen", "nowhere"]
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try ChildProcesses.start(process)
        // Waited for without blocking a thread of the test's executor (waitUntilExit would).
        #expect(await eventually { !process.isRunning })
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
    }
}
