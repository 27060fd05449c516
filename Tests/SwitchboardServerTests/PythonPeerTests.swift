import Foundation
import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// An independent client, written in Python from docs/PROTOCOL.md alone, against a live server.
@Suite(.timeLimit(.minutes(5))) struct PythonPeerTests {
    @Test func thePythonPeerPassesItsSelfCheck() async throws {
        let server = try await TestServer.start()
        let output = try await ProcessRunner.python("peer.py", ["--url", server.url])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("0 failed"), "\(output.text)")
    }

    @Test func thePythonStoragePeerPassesItsSelfCheck() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let output = try await ProcessRunner.python("peer_storage.py", ["--url", server.url])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("0 failed"), "\(output.text)")
    }
}
