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
    }

    private struct Inbox {
        var frames: [Inbound] = []
        var looping = false
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

    /// The request loop takes the frames queued so far, in order; nil when there are none, and
    /// the loop must end (the next frame starts a new one).
    func takeReceived() -> [Inbound]? {
        inbox.withLock { inbox in
            guard !inbox.frames.isEmpty else {
                inbox.looping = false
                return nil
            }
            defer { inbox.frames = [] }
            return inbox.frames
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
            if let session {
                state.session = session
                state.userId = userId
            }
        }
    }

    /// Forgets the session after a logout.
    func clearSession() { state.withLock { $0.session = nil } }

    /// Tells the client why it is being closed, then closes the connection.
    func closeAfterTelling(reason: RtmLinkStateChangeReason, detail: String) {
        state.withLock { $0.session = nil }
        socket.send(OutboundFrame.binary(ServerFrame.closing(reason: reason, detail: detail).encode()))
        socket.close(code: .policyViolation, reason: detail)
    }
}
