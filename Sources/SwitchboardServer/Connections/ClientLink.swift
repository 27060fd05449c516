import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The server's side of one client connection: its session, once logged in, and the order of
/// what it is sent.
///
/// While a login is being answered, pushes for the session (those kept while it was away) are
/// held back so the client sees the login answer first, then what it missed, then live traffic.
///
/// Frames from the client wait in an inbox; a request loop runs only while the inbox has frames
/// (at most one per link, so requests are answered in order) and ends when it is empty, so an
/// idle connection holds no task.
final class ClientLink: Sendable {
    /// What arrives from the client, in order.
    enum Inbound: Sendable {
        case frame(ClientFrame)
        case malformed(WireError)
    }

    private struct State {
        var session: SessionID?
        var userId: UserID = ""
        var answeringLogin = false
        var held: [OutboundFrame] = []
        /// Set when the socket closed or the server closed it: no session may be recorded after.
        var closed = false
        var loggedIn = false
        var loginDeadline: Task<Void, Never>?
    }

    private struct Inbox {
        var frames: [Inbound] = []
        var looping = false
        /// The socket closed: no frame will come after those queued.
        var closed = false
        /// `ConnectionDropped` was (or is being) published for this link.
        var dropReported = false
        /// Monotonic time the session was last told of a sign of life.
        var lastSignOfLife: Duration?
    }

    /// What the request loop does next.
    enum Next {
        /// Answer these frames, in order.
        case frames([Inbound])
        /// Nothing is queued: end the loop; `connectionClosed` when the loop must report the drop.
        case drained(connectionClosed: Bool)
    }

    let id: ConnectionID
    let socket: WebSocketConnection
    private let state = Mutex(State())
    private let inbox = Mutex(Inbox())
    private let limiter: Mutex<CallRateLimiter>

    init(socket: WebSocketConnection, limits: Limits) {
        self.socket = socket
        id = ConnectionID(socket.id)
        limiter = Mutex(CallRateLimiter(limits: limits))
    }

    /// The logged-in session and user, if any.
    var identity: (session: SessionID, userId: UserID)? {
        state.withLock { state in state.session.map { ($0, state.userId) } }
    }

    /// Queues a frame from the client; true when no request loop is running, and the caller must
    /// start one.
    func received(_ item: Inbound) -> Bool {
        inbox.withLock { inbox in
            inbox.frames.append(item)
            defer { inbox.looping = true }
            return !inbox.looping
        }
    }

    /// The request loop takes the frames queued so far, in order, or learns it must end (the
    /// next frame starts a new loop).
    func takeReceived() -> Next {
        inbox.withLock { inbox in
            guard inbox.frames.isEmpty else {
                defer { inbox.frames = [] }
                return .frames(inbox.frames)
            }
            inbox.looping = false
            let report = inbox.closed && !inbox.dropReported
            if report { inbox.dropReported = true }
            return .drained(connectionClosed: report)
        }
    }

    /// The socket closed: requests still queued are answered, but no new session is recorded.
    /// True when no request loop is running, so the caller reports the drop now; otherwise the
    /// running loop reports it once it has answered what was queued.
    func closeInbox() -> Bool {
        state.withLock { $0.closed = true }
        return inbox.withLock { inbox in
            inbox.closed = true
            guard !inbox.looping, !inbox.dropReported else { return false }
            inbox.dropReported = true
            return true
        }
    }

    /// Whether a second has passed since the session was last told this client is alive; if so,
    /// counts now as the time it is told.
    func isDueForSignOfLife(now: Duration) -> Bool {
        inbox.withLock { inbox in
            if let last = inbox.lastSignOfLife, now - last < .seconds(1) { return false }
            inbox.lastSignOfLife = now
            return true
        }
    }

    /// Takes one call from the link's rate budget; throws when the current second's is spent.
    func takeRateBudget(_ budget: CallRateLimiter.Budget, now: Duration, operation: String) throws(RtmError) {
        try limiter.withLock { limiter throws(RtmError) in try limiter.take(budget, now: now, operation: operation) }
    }

    /// Sends a pushed frame, or holds it while a login answer is pending.
    func send(_ frame: OutboundFrame) {
        state.withLock { state in
            if state.answeringLogin {
                state.held.append(frame)
            } else {
                socket.send(frame)
            }
        }
    }

    /// Sends a response frame.
    func reply(_ frame: ServerFrame) {
        socket.send(OutboundFrame.binary(frame.encode()))
    }

    /// Marks the start of a login answer: pushes are held until `finishLogin`.
    func beginLogin() { state.withLock { $0.answeringLogin = true } }

    /// Sends the login answer, then what was held, and records the session on success.
    func finishLogin(_ answer: ServerFrame, session: SessionID?, userId: UserID) {
        state.withLock { state in
            socket.send(OutboundFrame.binary(answer.encode()))
            for frame in state.held { socket.send(frame) }
            state.held.removeAll()
            state.answeringLogin = false
            if let session, !state.closed {
                state.session = session
                state.userId = userId
                state.loggedIn = true
                state.loginDeadline?.cancel()
                state.loginDeadline = nil
            }
        }
    }

    /// Forgets the session after a logout.
    func clearSession() { state.withLock { $0.session = nil } }

    /// Tells the client why it is being closed, then closes the connection.
    func closeAfterTelling(reason: RtmLinkStateChangeReason, detail: String) {
        state.withLock { state in
            state.session = nil
            state.closed = true
        }
        socket.send(OutboundFrame.binary(ServerFrame.closing(reason: reason, detail: detail).encode()))
        socket.close(code: .policyViolation, reason: detail)
    }

    // MARK: Login deadline

    /// Keeps `task`, the countdown to close the link if it does not log in; cancels it at once
    /// when the link has already logged in.
    func setLoginDeadline(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            if state.loggedIn { return true }
            state.loginDeadline?.cancel()
            state.loginDeadline = task
            return false
        }
        if cancelNow { task.cancel() }
    }

    /// Stops the login countdown (the connection closed).
    func cancelLoginDeadline() {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.loginDeadline = nil }
            return state.loginDeadline
        }
        task?.cancel()
    }

    /// Closes the connection with 1008 and `reason` unless it has logged in; true when it closed.
    func closeIfNeverLoggedIn(reason: String) -> Bool {
        let close = state.withLock { state -> Bool in
            state.loginDeadline = nil
            return !state.loggedIn && socket.isOpen
        }
        if close { socket.close(code: .policyViolation, reason: reason) }
        return close
    }
}
