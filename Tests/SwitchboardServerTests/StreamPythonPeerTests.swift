import Foundation
import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// Stream channels from an independent client, written in Python from docs/PROTOCOL.md §11 alone.
@Suite(.timeLimit(.minutes(5))) struct StreamPythonPeerTests {
    @Test func thePythonStreamPeerPassesItsSelfCheck() async throws {
        let server = try await TestServer.start()
        let output = try await ProcessRunner.python("peer_stream.py", ["--url", server.url])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains(" 0 failed"), "\(output.text)")
    }
}
