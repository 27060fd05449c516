import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The server's side of one client connection: its session, once logged in, and the order of
/// what it is sent.
///
/// While a login is being answered, pushes for the session (those kept while it was away) are
/// held back so the client sees the login answer first, then what it missed, then live traffic.
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

    let id: ConnectionID
    let socket: WebSocketConnection
    let inbound: AsyncStream<Inbound>
    private let inboundContinuation: AsyncStream<Inbound>.Continuation
    private let state = Mutex(State())

    init(socket: WebSocketConnection) {
        self.socket = socket
        id = ConnectionID(socket.id)
        (inbound, inboundContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// The logged-in session and user, if any.
    var identity: (session: SessionID, userId: UserID)? {
        state.withLock { state in state.session.map { ($0, state.userId) } }
    }

    /// Queues a frame from the client for the link's request loop.
    func received(_ item: Inbound) { inboundContinuation.yield(item) }

    /// No more frames will come.
    func finishInbound() { inboundContinuation.finish() }

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

    /// The socket closed: requests still queued run, but no new session is recorded.
    func markClosed() { state.withLock { $0.closed = true } }

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
