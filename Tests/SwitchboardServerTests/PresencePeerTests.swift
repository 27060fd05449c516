import Foundation
import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// An independent presence client, written in Python from docs/PROTOCOL.md alone, against a live server.
@Suite(.timeLimit(.minutes(5))) struct PresencePeerTests {
    @Test func thePythonPresenceCheckPasses() async throws {
        let server = try await TestServer.start()
        let output = try await ProcessRunner.python("peer_presence.py", ["--url", server.url])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("0 failed"), "\(output.text)")
    }

    @Test func thePythonPresenceExamplesMatchTheDocument() async throws {
        let output = try await ProcessRunner.python("peer_presence.py", ["--selftest-encoding"])
        #expect(output.status == 0 && output.text.contains("0 failed"), "\(output.text)")
    }
}
