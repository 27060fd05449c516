import Testing
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire
import SwitchboardCore

@Suite(.timeLimit(.minutes(5))) struct LoginTimeoutTests {
    @Test func connectionThatNeverLogsInIsClosedAfterTheTimeout() async throws {
        let clock = ManualClock()
        let lines = LogLines()
        let server = try await TestServer.start(clock: clock) { $0.log = lines.log }
        let group = try EventLoopGroup(threads: 1)
        let idle = PeerRecorder()
        let connection = try await connectRaw(to: server, group: group, recorder: idle)
        #expect(await isCounting(connection, idle))
        clock.advance(by: .seconds(9))
        // Nothing is due yet: the connection still answers.
        #expect(await isCounting(connection, idle, id: 2))
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
        let (recorder, idle) = (PeerRecorder(), PeerRecorder())
        let connection = try await connectRaw(to: server, group: group, recorder: recorder)
        #expect(await logIn(connection, recorder, as: "alice"))
        let idleConnection = try await connectRaw(to: server, group: group, recorder: idle)
        #expect(await isCounting(idleConnection, idle))
        clock.advance(by: .seconds(4))
        // The countdown ran: the connection that did not log in, after alice's in line, is closed.
        #expect(await eventually { idle.closed != nil })
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
        #expect(await clock.waitForSleepers())
        clock.advance(by: .seconds(6))
        let lateConnection = try await connectRaw(to: server, group: group, recorder: late)
        // The late connection's countdown starts now, at 6 s, not when the clock next moves.
        #expect(await isCounting(lateConnection, late))
        clock.advance(by: .seconds(4))
        #expect(await eventually { early.closed != nil })
        #expect(early.closed?.reason == "login timeout")
        // The pass that closed early is over and late, not yet due, still answers.
        #expect(await isCounting(lateConnection, late, id: 2))
        #expect(late.closed == nil)
        #expect(staying.closed == nil, "a connection that logged in is passed over")
        clock.advance(by: .seconds(6))
        #expect(await eventually { late.closed != nil })
        #expect(late.closed?.reason == "login timeout")
        _ = (earlyConnection, stayingConnection, lateConnection)
        await server.shutdown()
        group.shutdown()
    }

    /// Sends a request before logging in and waits for its refusal (`notLogin`): then the server
    /// has taken the connection in, its countdown started, and it is still open.
    func isCounting(_ connection: WebSocketConnection, _ recorder: PeerRecorder, id: UInt32 = 1) async -> Bool {
        connection.sendBinary(ClientFrame.heartbeat(id: id).encode())
        return await eventually {
            recorder.messages.contains { if case .error(id, let error) = $0 { error.code == .notLogin } else { false } }
        }
    }
}
