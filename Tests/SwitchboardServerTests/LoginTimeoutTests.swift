import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport

@Suite struct LoginTimeoutTests {
    @Test func connectionThatNeverLogsInIsClosedAfterTheTimeout() async throws {
        let clock = ManualClock()
        let lines = LogLines()
        let server = try await TestServer.start(clock: clock) { $0.log = lines.log }
        let group = try EventLoopGroup(threads: 1)
        let idle = PeerRecorder()
        let connection = try await connectRaw(to: server, group: group, recorder: idle)
        await clock.waitForSleepers()
        clock.advance(by: .seconds(9))
        try await Task.sleep(for: .milliseconds(20))
        #expect(idle.closed == nil)
        clock.advance(by: .seconds(1))
        #expect(await eventually { idle.closed != nil })
        #expect(idle.closed?.code == .policyViolation)
        #expect(idle.closed?.reason == "login timeout")
        #expect(await eventually { !lines.matching("refused 127.0.0.1:", "no login within").isEmpty })
        _ = connection
        await server.shutdown()
        group.shutdown()
    }

    @Test func loggedInConnectionOutlivesTheTimeout() async throws {
        let clock = ManualClock()
        let server = try await TestServer.start(clock: clock) { $0.loginTimeout = .seconds(3) }
        let group = try EventLoopGroup(threads: 1)
        let recorder = PeerRecorder()
        let connection = try await connectRaw(to: server, group: group, recorder: recorder)
        #expect(await logIn(connection, recorder, as: "alice"))
        clock.advance(by: .seconds(4))
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.closed == nil)
        #expect(connection.isOpen)
        await server.shutdown()
        group.shutdown()
    }
}
