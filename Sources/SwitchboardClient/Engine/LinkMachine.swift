import SwitchboardCore

/// The client's link as a pure state machine: what happens to the link state on each event, and
/// what the engine must do about it. No sockets, no tasks, no clock: time comes in with events.
///
/// States follow the reference (seed 004): `connecting` while logging in, `connected`,
/// `disconnected` while reconnecting after a lost connection, `suspended` once the lost
/// connection has outlasted the presence timeout (the server no longer keeps the session), and
/// `failed` when retrying cannot help. A logout or destroy leads back to `idle` and nothing else.
struct LinkMachine: Sendable {
    /// A link-state change to report to the app.
    struct Change: Equatable, Sendable {
        var state: RtmLinkState
        var previous: RtmLinkState
        var operation: RtmLinkOperation
        var reason: RtmLinkStateChangeReason
        /// Whether the change concerns the subscribed channels (they are listed as affected).
        var affectsChannels = false
        var unrestoredChannels: [String] = []
        var isResumed = false
    }

    /// What the engine does next.
    enum Command: Equatable, Sendable {
        /// Tell the app.
        case report(Change)
        /// Open a connection and log in on it (resuming the session when a ticket is held).
        case connect
        /// Wait, then send `.retryDue`.
        case retry(after: PortableDuration)
        /// Close the current connection, if any, and fail the requests waiting on it.
        case closeConnection
        /// Send heartbeats on the current connection.
        case startHeartbeats
        /// Answer the app's pending `login` call: success when nil.
        case finishLogin(RtmErrorInfo?)
        /// A new `login` replaces one still pending: that earlier call gets `loginCanceled`.
        case cancelEarlierLogin
        /// The server lost the session: restore subscriptions and states on the new one.
        case restoreSession
        /// Forget the resume ticket (the session is over).
        case forgetSession
    }

    /// What happened.
    enum Event: Sendable {
        /// The app called `login`.
        case loginRequested(now: PortableDuration)
        /// A connection attempt failed, or the server refused the login on it.
        case attemptFailed(RtmErrorInfo, now: PortableDuration)
        /// The server accepted the login; `resumed` when it took the old session back.
        case loggedIn(resumed: Bool, presenceTimeout: Int, now: PortableDuration)
        /// A new session after a reconnect has its channels back, but for these.
        case restored(unrestored: [String])
        /// The connection is gone without the server ending the session.
        case connectionLost(RtmLinkOperation, RtmLinkStateChangeReason, now: PortableDuration)
        /// The server ended the session for good, with this reason.
        case rejected(RtmLinkStateChangeReason)
        /// The app called `logout`.
        case logoutRequested
        /// The logout is done (answered, or the connection is gone).
        case logoutFinished
        /// The app called `destroy`.
        case destroyed
        /// The pause before the next attempt is over.
        case retryDue(now: PortableDuration)
        /// Time passed (for `suspended` and the reconnect timeout). `retryDue` applies it too, and
        /// while the link is down a retry is always due within 5 s, so the engine sends no other.
        case tick(now: PortableDuration)
    }

    /// How long after a disconnection a reconnect still counts as resumed (seed 004).
    static let resumeWindow: PortableDuration = .seconds(120)

    /// The reconnect timeout in seconds; 0 retries for ever.
    let reconnectTimeout: Int
    private(set) var state: RtmLinkState = .idle
    /// A `login` call waits for its answer.
    private(set) var loginPending = false
    /// A `logout` is under way: a closing connection is expected, not lost.
    private(set) var loggingOut = false
    private var attempt = 0
    private var deadline: PortableDuration?
    private var disconnectedAt: PortableDuration?
    private var presenceTimeout: PortableDuration = .seconds(300)
    /// The server accepted a login once since `login` (a reconnect resumes rather than logs in).
    private var everConnected = false
    /// Waiting for `.restored` after a new session replaced a lost one.
    private var restoring = false

    init(reconnectTimeout: Int) { self.reconnectTimeout = reconnectTimeout }

    /// The pause before attempt `attempt` (0-based): 100 ms doubling to at most 5 s.
    static func backoff(attempt: Int) -> PortableDuration {
        .milliseconds(min(100 << min(attempt, 6), 5_000))
    }

    /// The link-state reason for a login the server refused, when retrying cannot help; nil
    /// when the server could not be reached or did not answer, which the next attempt may fix.
    static func fatalReason(forLoginError code: RtmErrorCode) -> RtmLinkStateChangeReason? {
        switch code {
        case .notConnected, .loginTimeout: nil
        case .invalidToken: .invalidToken
        case .tokenExpired: .tokenExpired
        case .invalidAppId, .loginInconsistentAppId: .inconsistentAppId
        case .invalidUserId: .invalidUserId
        case .loginNotAuthorized: .loginNotAuthorized
        default: .loginRejected
        }
    }

    /// What a `closing` push from the server means.
    enum ClosingMeaning: Equatable {
        /// Reconnect and resume the session.
        case reconnect
        /// The connection was replaced by this client's own resume: nothing to do.
        case ignore
        /// The session is over: the link fails for this reason.
        case fail(RtmLinkStateChangeReason)
    }

    /// Reads the server's closing reason.
    static func meaning(ofClosing reason: RtmLinkStateChangeReason) -> ClosingMeaning {
        switch reason {
        case .keepAliveTimeout, .connectionError, .networkChange: .reconnect
        case .relogin: .ignore
        case .sameUidLogin, .tokenExpired, .invalidToken, .inconsistentAppId, .loginRejected: .fail(reason)
        default: .fail(.kickedOutByServer)
        }
    }

    mutating func handle(_ event: Event) -> [Command] {
        switch event {
        case .loginRequested(let now): return loginRequested(now: now)
        case .attemptFailed(let error, let now): return attemptFailed(error, now: now)
        case .loggedIn(let resumed, let timeout, let now): return loggedIn(resumed: resumed, presenceTimeout: timeout, now: now)
        case .restored(let unrestored): return restored(unrestored)
        case .connectionLost(let operation, let reason, let now): return connectionLost(operation, reason, now: now)
        case .rejected(let reason): return rejected(reason)
        case .logoutRequested: return logoutRequested()
        case .logoutFinished: return logoutFinished()
        case .destroyed: return destroyed()
        case .retryDue(let now): return retryDue(now: now)
        case .tick(let now): return tick(now: now)
        }
    }

    // MARK: Login

    /// Whether `login` may start now: from idle or failed, or to replace a login still pending.
    var acceptsLogin: Bool { state == .idle || state == .failed || state == .connecting }

    private mutating func loginRequested(now: PortableDuration) -> [Command] {
        guard acceptsLogin else { return [] }
        // A second login replaces one still pending (seed 000: the earlier call gets loginCanceled).
        var commands: [Command] = loginPending ? [.cancelEarlierLogin, .closeConnection] : []
        loginPending = true
        loggingOut = false
        everConnected = false
        restoring = false
        attempt = 0
        disconnectedAt = nil
        deadline = reconnectTimeout > 0 ? now + .seconds(reconnectTimeout) : nil
        if state != .connecting { commands.append(contentsOf: move(to: .connecting, .login, .login)) }
        commands.append(.connect)
        return commands
    }

    private mutating func attemptFailed(_ error: RtmErrorInfo, now: PortableDuration) -> [Command] {
        guard state == .connecting || state == .disconnected || state == .suspended, !loggingOut else { return [] }
        // A restore under way belonged to the connection that just failed.
        restoring = false
        let operation: RtmLinkOperation = state == .connecting ? .login : .autoReconnect
        if let fatal = Self.fatalReason(forLoginError: error.errorCode) {
            return fail(operation, fatal, loginError: error)
        }
        if let deadline, now >= deadline {
            let reason: RtmLinkStateChangeReason = state == .connecting ? .loginTimeout : .reconnectTimeout
            let timeout = RtmErrorInfo(.loginTimeout, operation: OperationName.Session.login, reason: "could not log in before the reconnect timeout")
            return fail(operation, reason, loginError: timeout)
        }
        defer { attempt += 1 }
        return [.closeConnection, .retry(after: Self.backoff(attempt: attempt))]
    }

    private mutating func retryDue(now: PortableDuration) -> [Command] {
        guard state == .connecting || state == .disconnected || state == .suspended, !loggingOut else { return [] }
        if let deadline, now >= deadline, state != .connecting {
            return fail(.autoReconnect, .reconnectTimeout, loginError: nil)
        }
        return tick(now: now) + [.connect]
    }

    private mutating func loggedIn(resumed: Bool, presenceTimeout seconds: Int, now: PortableDuration) -> [Command] {
        presenceTimeout = .seconds(seconds)
        attempt = 0
        switch state {
        case .connecting:
            everConnected = true
            deadline = nil
            loginPending = false
            return move(to: .connected, .login, .loginSuccess) + [.startHeartbeats, .finishLogin(nil)]
        case .disconnected, .suspended:
            if resumed { return reconnected(unrestored: [], sessionKept: true, now: now) }
            restoring = true
            return [.restoreSession]
        default:
            return []
        }
    }

    private mutating func restored(_ unrestored: [String]) -> [Command] {
        guard restoring, state == .disconnected || state == .suspended else { return [] }
        restoring = false
        return reconnected(unrestored: unrestored, sessionKept: false, now: nil)
    }

    private mutating func reconnected(unrestored: [String], sessionKept: Bool, now: PortableDuration?) -> [Command] {
        // Resumed (seed 004): back within two minutes of the disconnection, with the session kept.
        var withinWindow = false
        if let now, let lost = disconnectedAt { withinWindow = now - lost <= Self.resumeWindow }
        deadline = nil
        disconnectedAt = nil
        let change = Change(
            state: .connected, previous: state, operation: .reconnected, reason: .reconnectSuccess,
            affectsChannels: true, unrestoredChannels: unrestored, isResumed: sessionKept && withinWindow)
        state = .connected
        return [.report(change), .startHeartbeats]
    }

    // MARK: Losing the link

    private mutating func connectionLost(
        _ operation: RtmLinkOperation, _ reason: RtmLinkStateChangeReason, now: PortableDuration
    ) -> [Command] {
        // While connecting or reconnecting, a closed connection fails the attempt instead.
        guard state == .connected, !loggingOut else { return [] }
        disconnectedAt = now
        deadline = reconnectTimeout > 0 ? now + .seconds(reconnectTimeout) : nil
        attempt = 1
        var commands: [Command] = [.closeConnection]
        commands += move(to: .disconnected, operation, reason, affectsChannels: true)
        return commands + [.retry(after: Self.backoff(attempt: 0))]
    }

    private mutating func rejected(_ reason: RtmLinkStateChangeReason) -> [Command] {
        guard state != .idle, state != .failed, !loggingOut else { return [] }
        let operation: RtmLinkOperation = .serverReject
        let error = loginPending ? RtmErrorInfo(.loginRejected, operation: OperationName.Session.login, reason: "the server refused: \(reason)") : nil
        return fail(operation, reason, loginError: error)
    }

    private mutating func tick(now: PortableDuration) -> [Command] {
        guard state == .disconnected, let lost = disconnectedAt, now - lost > presenceTimeout else { return [] }
        // The server no longer keeps the session: the link is suspended, and reconnecting goes on.
        return move(to: .suspended, .serverTimeout, .keepAliveTimeout, affectsChannels: true)
    }

    // MARK: Leaving

    private mutating func logoutRequested() -> [Command] {
        switch state {
        case .idle:
            return []
        case .connected:
            loggingOut = true
            return []
        case .connecting, .disconnected, .suspended, .failed:
            var commands: [Command] = loginPending ? [.finishLogin(Self.canceled)] : []
            loginPending = false
            commands += [.closeConnection]
            return commands + leave() + [.forgetSession]
        }
    }

    private mutating func logoutFinished() -> [Command] {
        guard loggingOut else { return [] }
        loggingOut = false
        return [.closeConnection] + leave() + [.forgetSession]
    }

    private mutating func destroyed() -> [Command] {
        var commands: [Command] = loginPending ? [.finishLogin(Self.canceled)] : []
        loginPending = false
        loggingOut = false
        state = .idle
        commands += [.closeConnection, .forgetSession]
        return commands
    }

    /// Back to idle. The report lists the channels left (forgetting them comes after it).
    private mutating func leave() -> [Command] {
        deadline = nil
        disconnectedAt = nil
        restoring = false
        return move(to: .idle, .logout, .logout, affectsChannels: true)
    }

    private mutating func fail(
        _ operation: RtmLinkOperation, _ reason: RtmLinkStateChangeReason, loginError: RtmErrorInfo?
    ) -> [Command] {
        var commands: [Command] = [.closeConnection]
        if loginPending {
            commands.append(.finishLogin(loginError ?? RtmErrorInfo(.loginRejected, operation: OperationName.Session.login, reason: "\(reason)")))
            loginPending = false
        }
        deadline = nil
        restoring = false
        // The report lists the channels lost, so they are forgotten only after it.
        return commands + move(to: .failed, operation, reason, affectsChannels: disconnectedAt != nil || everConnected)
            + [.forgetSession]
    }

    private mutating func move(
        to next: RtmLinkState, _ operation: RtmLinkOperation, _ reason: RtmLinkStateChangeReason,
        affectsChannels: Bool = false
    ) -> [Command] {
        let change = Change(state: next, previous: state, operation: operation, reason: reason, affectsChannels: affectsChannels)
        state = next
        return [.report(change)]
    }

    private static let canceled = RtmErrorInfo(.loginCanceled, operation: OperationName.Session.login, reason: "the login was canceled")
}
