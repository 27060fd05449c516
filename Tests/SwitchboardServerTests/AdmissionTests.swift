import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

@Suite(.timeLimit(.minutes(5))) struct AdmissionTests {
    @Test func onlyAllowedOriginsMayConnect() async throws {
        let lines = LogLines()
        let server = try await TestServer.start {
            $0.allowedOrigins = ["https://App.example/"]
            $0.log = lines.log
        }
        let group = try EventLoopGroup(threads: 1)
        await #expect(throws: WebSocketClientError.self) {
            try await connectRaw(
                to: server, group: group, recorder: PeerRecorder(), headers: [("Origin", "https://evil.example")])
        }
        #expect(await eventually { !lines.matching("refused 127.0.0.1:", "403 origin not allowed").isEmpty })
        let allowed = try await connectRaw(
            to: server, group: group, recorder: PeerRecorder(), headers: [("Origin", "https://app.example")])
        let noOrigin = try await connectRaw(to: server, group: group, recorder: PeerRecorder())
        #expect(allowed.isOpen && noOrigin.isOpen)
        await server.shutdown()
        group.shutdown()
    }

    @Test func connectionsPerAddressAreCapped() async throws {
        let lines = LogLines()
        let server = try await TestServer.start {
            $0.maxConnectionsPerAddress = 2
            $0.connectionCapExemptAddresses = []
            $0.log = lines.log
        }
        let group = try EventLoopGroup(threads: 1)
        let first = try await connectRaw(to: server, group: group, recorder: PeerRecorder())
        _ = try await connectRaw(to: server, group: group, recorder: PeerRecorder())
        await #expect(throws: WebSocketClientError.self) {
            try await connectRaw(to: server, group: group, recorder: PeerRecorder())
        }
        #expect(await eventually { !lines.matching("refused 127.0.0.1:", "too many connections").isEmpty })
        first.close()
        // The slot frees once the closed socket is gone, a moment after the closing handshake.
        var again: WebSocketConnection?
        for _ in 0..<100 where again == nil {
            again = try? await connectRaw(to: server, group: group, recorder: PeerRecorder())
            if again == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(again?.isOpen == true)
        await server.shutdown()
        group.shutdown()
    }

    @Test func loopbackIsExemptFromTheCapByDefault() async throws {
        let server = try await TestServer.start { $0.maxConnectionsPerAddress = 1 }
        let group = try EventLoopGroup(threads: 1)
        for _ in 0..<3 { _ = try await connectRaw(to: server, group: group, recorder: PeerRecorder()) }
        #expect(await eventually { server.connectionCount == 3 })
        await server.shutdown()
        group.shutdown()
    }

    @Test func aClientSendingTooManyFramesIsClosed() async throws {
        let lines = LogLines()
        let server = try await TestServer.start {
            $0.maxFramesPerSecond = 50
            $0.log = lines.log
        }
        let group = try EventLoopGroup(threads: 1)
        let recorder = PeerRecorder()
        let connection = try await connectRaw(to: server, group: group, recorder: recorder)
        #expect(await logIn(connection, recorder, as: "alice"))
        for _ in 0..<200 { connection.sendPing() }
        #expect(await eventually { recorder.closed != nil })
        #expect(recorder.closed?.code == .policyViolation)
        #expect(recorder.closed?.reason == "too many frames")
        #expect(await eventually { !lines.matching("refused 127.0.0.1:", "too many frames").isEmpty })
        await server.shutdown()
        group.shutdown()
    }

    @Test func framesUnderTheCapAreServed() async throws {
        let server = try await TestServer.start { $0.maxFramesPerSecond = 50 }
        let group = try EventLoopGroup(threads: 1)
        let recorder = PeerRecorder()
        let connection = try await connectRaw(to: server, group: group, recorder: recorder)
        #expect(await logIn(connection, recorder, as: "alice"))
        for _ in 0..<40 { connection.sendPing() }
        // A request after the pings is answered: the server read them all and kept the connection.
        connection.sendBinary(ClientFrame.heartbeat(id: 2).encode())
        #expect(await eventually { recorder.messages.contains { $0.requestId == 2 } })
        #expect(recorder.closed == nil)
        // The cap was there to be met: 60 more within the second close the connection.
        for _ in 0..<60 { connection.sendPing() }
        #expect(await eventually { recorder.closed != nil })
        #expect(recorder.closed?.code == .policyViolation)
        await server.shutdown()
        group.shutdown()
    }
}
