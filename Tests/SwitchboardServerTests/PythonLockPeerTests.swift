import Foundation
import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// An independent lock client, written in Python from docs/PROTOCOL.md §14 alone, against a live
/// server, including an owner's cut connection and its real 10 s ttl.
@Suite(.timeLimit(.minutes(5))) struct PythonLockPeerTests {
    @Test func thePythonLockPeerPassesItsSelfCheck() async throws {
        let server = try await TestServer.start()
        let output = try await ProcessRunner.python("peer_lock.py", ["--url", server.url, "--ttl-check"])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains(" 0 failed"), "\(output.text)")
    }

    @Test func thePythonLockPeerEncodesTheDocumentedExamples() async throws {
        let output = try await ProcessRunner.python("peer_lock.py", ["--selftest-encoding"])
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("24 passed, 0 failed"), "\(output.text)")
    }
}
