import Foundation
import Testing
import SwitchboardClient
import SwitchboardTesting
import SwitchboardTestKit

/// `switchboard serve --tls-cert FILE --tls-key FILE` serves `wss://`.
@Suite(.timeLimit(.minutes(1))) struct ExecutableTLSTests {
    @Test func servesWSSAndPrintsAWSSURL() async throws {
        try await TestCertificates.with { certificates in
            let process = Process()
            process.executableURL = ExecutableTests.executable
            process.arguments = [
                "serve", "--listen", "127.0.0.1:0", "--admin-listen", "off", "--data-dir", certificates.directory + "/data",
                "--tls-cert", certificates.certificateFile, "--tls-key", certificates.keyFile, "--log-level", "warning",
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try ChildProcesses.start(process)
            defer { if process.isRunning { process.terminate() } }
            let handle = output.fileHandleForReading
            let url = try await BlockingWork.run { BlockingWork.readLine(handle) }
            #expect(url.hasPrefix("wss://127.0.0.1:"), "printed \(url.debugDescription)")

            let config = RtmClientConfig(appId: "app", userId: "operator")
            config.privateConfig = RtmPrivateConfig()
            config.privateConfig?.accessPointHosts = [url]
            config.privateConfig?.tlsCAFile = certificates.caFile
            let client = try RtmClientKit(config, delegate: nil)
            #expect(await client.login("").1 == nil)
            client.destroy()

            kill(process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!process.isRunning)
            if !process.isRunning { #expect(process.terminationStatus == 0) }
        }
    }

    @Test func unusableTLSFilesStopTheCommand() async throws {
        for (arguments, status) in [
            (["--tls-cert", "/nonexistent/cert.pem"], Int32(2)),
            (["--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], Int32(1)),
        ] {
            let executable = ExecutableTests.executable.path
            let result = try await BlockingWork.run {
                try BlockingWork.runProcess(
                    executable, ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "off", "--data-dir", "/nonexistent/data"] + arguments)
            }
            #expect(result.status == status)
            #expect(result.output.contains("tls") || result.output.contains("TLS"), "\(result.output)")
        }
    }
}
