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

    @Test func eachConnectionHasItsOwnDeadlineOnTheOneCountdown() async throws {
        let clock = ManualClock()
        let server = try await TestServer.start(clock: clock) { $0.loginTimeout = .seconds(10) }
        let group = try EventLoopGroup(threads: 1)
        let (early, staying, late) = (PeerRecorder(), PeerRecorder(), PeerRecorder())
        let earlyConnection = try await connectRaw(to: server, group: group, recorder: early)
        let stayingConnection = try await connectRaw(to: server, group: group, recorder: staying)
        #expect(await logIn(stayingConnection, staying, as: "alice"))
        await clock.waitForSleepers()
        clock.advance(by: .seconds(6))
        let lateConnection = try await connectRaw(to: server, group: group, recorder: late)
        try await Task.sleep(for: .milliseconds(20))
        clock.advance(by: .seconds(4))
        #expect(await eventually { early.closed != nil })
        #expect(early.closed?.reason == "login timeout")
        try await Task.sleep(for: .milliseconds(50))
        #expect(late.closed == nil)
        #expect(staying.closed == nil, "a connection that logged in is passed over")
        clock.advance(by: .seconds(6))
        #expect(await eventually { late.closed != nil })
        #expect(late.closed?.reason == "login timeout")
        _ = (earlyConnection, stayingConnection, lateConnection)
        await server.shutdown()
        group.shutdown()
    }
}
