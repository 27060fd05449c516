import Testing
import SwitchboardCore
@testable import SwitchboardClient

/// The link state machine alone: no sockets, time given with each event.
@Suite(.timeLimit(.minutes(5))) struct LinkMachineTests {
    typealias Machine = LinkMachine

    /// The state changes reported by `commands`, as (state, operation, reason).
    func reports(_ commands: [Machine.Command]) -> [Machine.Change] {
        commands.compactMap { if case .report(let change) = $0 { change } else { nil } }
    }

    func connected(reconnectTimeout: Int = 0) -> Machine {
        var machine = Machine(reconnectTimeout: reconnectTimeout)
        _ = machine.handle(.loginRequested(now: .zero))
        _ = machine.handle(.loggedIn(resumed: false, presenceTimeout: 30, now: .zero))
        return machine
    }

    @Test func backoffDoublesToACap() {
        #expect(Machine.backoff(attempt: 0) == .milliseconds(100))
        #expect(Machine.backoff(attempt: 1) == .milliseconds(200))
        #expect(Machine.backoff(attempt: 5) == .milliseconds(3_200))
        #expect(Machine.backoff(attempt: 6) == .seconds(5))
        #expect(Machine.backoff(attempt: 1_000) == .seconds(5))
    }

    @Test func onlyUnreachableServersAreRetried() {
        #expect(Machine.fatalReason(forLoginError: .notConnected) == nil)
        #expect(Machine.fatalReason(forLoginError: .loginTimeout) == nil)
        #expect(Machine.fatalReason(forLoginError: .invalidToken) == .invalidToken)
        #expect(Machine.fatalReason(forLoginError: .tokenExpired) == .tokenExpired)
        #expect(Machine.fatalReason(forLoginError: .invalidAppId) == .inconsistentAppId)
        #expect(Machine.fatalReason(forLoginError: .loginNoServerResources) == .loginRejected)
        #expect(Machine.fatalReason(forLoginError: .loginAborted) == .loginRejected)
    }

    @Test func closingReasonsDecideBetweenResumeAndFailure() {
        #expect(Machine.meaning(ofClosing: .keepAliveTimeout) == .reconnect)
        #expect(Machine.meaning(ofClosing: .relogin) == .ignore)
        #expect(Machine.meaning(ofClosing: .sameUidLogin) == .fail(.sameUidLogin))
        #expect(Machine.meaning(ofClosing: .tokenExpired) == .fail(.tokenExpired))
        #expect(Machine.meaning(ofClosing: .unknown) == .fail(.kickedOutByServer))
    }

    @Test func aLoginConnectsRetriesUnreachableServersAndSucceeds() {
        var machine = Machine(reconnectTimeout: 0)
        let start = machine.handle(.loginRequested(now: .zero))
        #expect(reports(start).map(\.state) == [.connecting])
        #expect(start.last == .connect)
        #expect(machine.handle(.attemptFailed(RtmErrorInfo(.notConnected, operation: "login", reason: ""), now: .zero))
            == [.closeConnection, .retry(after: .milliseconds(100))])
        #expect(machine.handle(.retryDue(now: .milliseconds(100))) == [.connect])
        let done = machine.handle(.loggedIn(resumed: false, presenceTimeout: 30, now: .seconds(1)))
        #expect(reports(done).map(\.reason) == [.loginSuccess])
        #expect(done.contains(.finishLogin(nil)))
        #expect(machine.state == .connected)
    }

    @Test func aRefusedLoginFailsAtOnce() {
        var machine = Machine(reconnectTimeout: 0)
        _ = machine.handle(.loginRequested(now: .zero))
        let refused = RtmErrorInfo(.invalidToken, operation: "login", reason: "bad")
        let commands = machine.handle(.attemptFailed(refused, now: .zero))
        #expect(commands.contains(.finishLogin(refused)))
        #expect(reports(commands).map(\.state) == [.failed])
        #expect(reports(commands).first?.reason == .invalidToken)
    }

    @Test func theReconnectTimeoutEndsALoginThatCannotConnect() {
        var machine = Machine(reconnectTimeout: 15)
        _ = machine.handle(.loginRequested(now: .zero))
        let unreachable = RtmErrorInfo(.notConnected, operation: "login", reason: "")
        #expect(reports(machine.handle(.attemptFailed(unreachable, now: .seconds(14)))).isEmpty)
        let commands = machine.handle(.attemptFailed(unreachable, now: .seconds(15)))
        #expect(reports(commands).map(\.reason) == [.loginTimeout])
        #expect(commands.contains { if case .finishLogin(let error?) = $0 { error.errorCode == .loginTimeout } else { false } })
    }

    @Test func aSecondLoginCancelsThePendingOneWithoutANewState() {
        var machine = Machine(reconnectTimeout: 0)
        _ = machine.handle(.loginRequested(now: .zero))
        let again = machine.handle(.loginRequested(now: .seconds(1)))
        #expect(again == [.cancelEarlierLogin, .closeConnection, .connect])
        #expect(machine.state == .connecting)
    }

    @Test func logoutBeforeSuccessCancelsTheLoginAndGoesIdle() {
        var machine = Machine(reconnectTimeout: 0)
        _ = machine.handle(.loginRequested(now: .zero))
        let commands = machine.handle(.logoutRequested)
        guard case .finishLogin(let error?) = commands.first else {
            Issue.record("the pending login must be answered first, got \(commands)")
            return
        }
        #expect(error.errorCode == .loginCanceled)
        #expect(reports(commands).map(\.state) == [.idle])
        // A late answer to the canceled attempt changes nothing.
        #expect(machine.handle(.loggedIn(resumed: false, presenceTimeout: 30, now: .seconds(1))).isEmpty)
        #expect(machine.state == .idle)
    }

    @Test func aCleanLogoutReportsOnlyIdleEvenIfTheConnectionClosesFirst() {
        var machine = connected()
        #expect(machine.handle(.logoutRequested).isEmpty)
        // The server closes the socket right after its answer: that is not a lost connection.
        #expect(machine.handle(.connectionLost(.networkChange, .connectionError, now: .seconds(1))).isEmpty)
        #expect(machine.handle(.rejected(.kickedOutByServer)).isEmpty)
        let done = machine.handle(.logoutFinished)
        #expect(reports(done).map(\.state) == [.idle])
        #expect(reports(done).first?.previous == .connected)
        #expect(reports(done).first?.reason == .logout)
    }

    @Test func aLostConnectionReconnectsAndAResumeWithinTwoMinutesIsResumed() {
        var machine = connected()
        let lost = machine.handle(.connectionLost(.heartbeatTimeout, .keepAliveTimeout, now: .seconds(10)))
        #expect(reports(lost).map(\.state) == [.disconnected])
        #expect(reports(lost).first?.affectsChannels == true)
        #expect(machine.handle(.retryDue(now: .seconds(11))) == [.connect])
        let back = machine.handle(.loggedIn(resumed: true, presenceTimeout: 30, now: .seconds(129)))
        let change = reports(back).first
        #expect(change?.state == .connected)
        #expect(change?.operation == .reconnected)
        #expect(change?.isResumed == true)
        #expect(change?.unrestoredChannels == [])
    }

    @Test func aResumeAfterTwoMinutesIsNotResumed() {
        var machine = connected()
        _ = machine.handle(.connectionLost(.heartbeatTimeout, .keepAliveTimeout, now: .seconds(10)))
        let back = machine.handle(.loggedIn(resumed: true, presenceTimeout: 300, now: .seconds(131)))
        #expect(reports(back).first?.isResumed == false)
    }

    @Test func pastThePresenceTimeoutTheLinkIsSuspendedAndANewSessionIsRestored() {
        var machine = connected()
        _ = machine.handle(.connectionLost(.networkChange, .connectionError, now: .seconds(10)))
        #expect(reports(machine.handle(.tick(now: .seconds(40)))).isEmpty)
        let suspended = machine.handle(.tick(now: .seconds(41)))
        #expect(reports(suspended).map(\.state) == [.suspended])
        #expect(machine.handle(.loggedIn(resumed: false, presenceTimeout: 30, now: .seconds(60))) == [.restoreSession])
        let restored = machine.handle(.restored(unrestored: ["gone"]))
        let change = reports(restored).first
        #expect(change?.previous == .suspended)
        #expect(change?.state == .connected)
        #expect(change?.unrestoredChannels == ["gone"])
        #expect(change?.isResumed == false)
    }

    @Test func theReconnectTimeoutFailsAReconnect() {
        var machine = connected(reconnectTimeout: 15)
        _ = machine.handle(.connectionLost(.networkChange, .connectionError, now: .seconds(10)))
        let failed = machine.handle(.retryDue(now: .seconds(25)))
        #expect(reports(failed).map(\.reason) == [.reconnectTimeout])
        #expect(machine.state == .failed)
    }

    @Test func aKickFailsTheLinkAndForgetsTheSession() {
        var machine = connected()
        let kicked = machine.handle(.rejected(.sameUidLogin))
        #expect(kicked.contains(.forgetSession))
        #expect(reports(kicked).map(\.state) == [.failed])
        #expect(reports(kicked).first?.operation == .serverReject)
    }

    @Test func destroyStopsEverythingWithoutReporting() {
        var machine = Machine(reconnectTimeout: 0)
        _ = machine.handle(.loginRequested(now: .zero))
        let commands = machine.handle(.destroyed)
        #expect(reports(commands).isEmpty)
        #expect(commands.contains(.closeConnection))
        #expect(machine.handle(.retryDue(now: .seconds(1))).isEmpty)
    }

    @Test func aRestoreCutShortByAFailedConnectionDoesNotReportConnected() {
        var machine = connected()
        _ = machine.handle(.connectionLost(.networkChange, .connectionError, now: .seconds(10)))
        _ = machine.handle(.retryDue(now: .seconds(11)))
        #expect(machine.handle(.loggedIn(resumed: false, presenceTimeout: 30, now: .seconds(11))) == [.restoreSession])
        let failed = machine.handle(.attemptFailed(RtmErrorInfo(.notConnected, operation: "login", reason: ""), now: .seconds(12)))
        #expect(failed.contains { if case .retry = $0 { true } else { false } })
        // The restore of the connection that failed finishes late: nothing changes.
        #expect(machine.handle(.restored(unrestored: ["a"])).isEmpty)
        #expect(machine.state == .disconnected)
        #expect(machine.handle(.retryDue(now: .seconds(13))) == [.connect])
    }
}
