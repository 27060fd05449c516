import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// One transport connection (one WebSocket), numbered for the life of the server.
struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    let rawValue: UInt64
    init(_ rawValue: UInt64) { self.rawValue = rawValue }
    var description: String { "connection#\(rawValue)" }
}

/// What arrives from a client, in order.
enum InboundRequest: Sendable {
    /// A frame to carry out; `budgetTaken` when its rate budget was taken already (it was
    /// tried at once, and its module had to wait for it).
    case frame(ClientFrame, budgetTaken: Bool = false)
    case malformed(WireError)
}

/// What a link's request loop does next.
enum RequestLoopStep {
    /// Answer these frames, in order.
    case frames([InboundRequest])
    /// Nothing is queued: end the loop; `connectionClosed` when the loop must report the close.
    case drained(connectionClosed: Bool)
}

/// A link's frames waiting for its request loop, and what the loop and the registry keep with them.
private struct LinkInbox {
    var frames: [InboundRequest] = []
    /// The wire size of `frames`.
    var bytes = 0
    var looping = false
    /// The socket closed: no frame will come after those queued.
    var closed = false
    /// The close was (or is being) reported to the registry.
    var closeReported = false
    /// Monotonic time the session was last told of a sign of life.
    var lastSignOfLife: Duration?
    /// The session this link carries, as the `SessionRegistry` (its only writer, under its
    /// own lock) last set it: kept with the inbox, so a frame answered at once takes one lock.
    var caller: Caller?
    /// Requests started and not answered yet (publishes forwarded to other nodes).
    var started = 0
    /// Request loops waiting for fewer started requests than their limit.
    var waitingForStarted: [(below: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// The link's call budgets: under the inbox's lock, so a frame answered at once finds its
    /// caller and pays its budget in one lock.
    var limiter: CallRateLimiter

    init(limiter: CallRateLimiter) { self.limiter = limiter }
}

/// The server's side of one client connection: its socket, the frames waiting to be answered,
/// its call budget and whether it logged in. Which session it carries is the `SessionRegistry`'s
/// fact, not the link's.
///
/// Frames from the client wait in an inbox; a request loop runs only while the inbox has frames
/// (at most one per link, so requests are answered in order) and ends when it is empty, so an
/// idle connection holds no task. `Connection` is `WebSocketConnection` in the server
/// (`SocketLink`) and an in-memory double in tests (`LinkConnection` says why that costs nothing).
final class ClientLink<Connection: LinkConnection>: Sendable {
    let id: ConnectionID
    let socket: Connection
    private let inbox: Mutex<LinkInbox>
    private let loggedIn = Atomic<Bool>(false)
    // Concurrency proof: `readSlot` is touched only through `withRead`, which
    // `RequestDispatcher.answerInPlace` and `RequestDispatcher.readEnded` call as the link's frames
    // are handed over, when their read ends and when the link closes (`ConnectionHub`): the
    // transport makes these calls for one connection on its one loop thread, one after another (a
    // test's harness on its one thread likewise), so
    // accesses never overlap: not checked for exclusivity at run time (a check per frame, and its
    // thread-local lookup, cost more than what the share saves).
    @exclusivity(unchecked) nonisolated(unsafe) private var readSlot = ReadShare()
    // Concurrency proof: as `readSlot`'s; `memoSlot` is reached only through `withReceiverMemo`,
    // which `RequestDispatcher.answerInPlace` calls on the connection's loop thread, and freed
    // by `deinit`, when nothing else can reach it. Made at the link's first publish read in place:
    // a connection that never publishes (most idle ones) keeps a pointer, not the memo.
    @exclusivity(unchecked) nonisolated(unsafe) private var memoSlot: UnsafeMutablePointer<ReceiverMemo>?

    /// A link for `socket` whose calls are counted by a copy of `limiter`.
    init(socket: Connection, limiter: CallRateLimiter) {
        self.socket = socket
        id = ConnectionID(socket.id)
        inbox = Mutex(LinkInbox(limiter: limiter))
    }

    /// The session this link carries, if it is logged in.
    var caller: Caller? { inbox.withLock { $0.caller } }

    /// Records the session this link carries. Only `SessionRegistry` calls this, under its lock.
    func setCaller(_ caller: Caller?) { inbox.withLock { $0.caller = caller } }

    // MARK: One read

    /// What the frames of one read from the socket share: the clocks, read for the first frame
    /// that needs them and not again, and the publishes answered at once, counted into the
    /// metrics when the read ends (`RequestDispatcher.readEnded`): one clock reading and one count a
    /// read, not one a message.
    struct ReadShare {
        /// The monotonic (coarse) time and the wall clock's milliseconds, once read.
        var clocks: (now: Duration, wallMilliseconds: UInt64)?
        /// Publishes answered at once and accepted, by channel type (message, user), and refused.
        var accepted: (message: UInt64, user: UInt64) = (0, 0)
        var refused: UInt64 = 0
        /// The thread's `ReadScope` was opened for this read: its first frame opens it, and the
        /// others need not look at the thread's state again.
        var scopeEntered = false

        /// Opens the thread's `ReadScope` for this read at its first frame.
        @inline(__always)
        mutating func enterScope() {
            guard !scopeEntered else { return }
            ReadScope.enter()
            scopeEntered = true
        }

        /// The clocks for this read: read from `clock` the first time.
        mutating func clocks(from clock: any SwitchboardClock) -> (now: Duration, wallMilliseconds: UInt64) {
            if let clocks { return clocks }
            let read = (clock.coarseNow, clock.wallMilliseconds)
            clocks = read
            return read
        }

        /// Counts a publish answered at once on a channel of `type`.
        mutating func accepted(_ type: RtmChannelType) {
            if type == .user { accepted.user += 1 } else { accepted.message += 1 }
        }
    }

    /// Runs `body` with what this read's frames share; only on the connection's loop thread.
    @inline(__always)
    func withRead<Result>(_ body: (inout ReadShare) -> Result) -> Result { body(&readSlot) }

    /// Runs `body` with the link's memo of its last user-channel receiver (`ReceiverMemo`), valid
    /// during the call; only on the connection's loop thread.
    @inline(__always)
    func withReceiverMemo<Result>(_ body: (UnsafeMutablePointer<ReceiverMemo>) throws(RtmError) -> Result) throws(RtmError) -> Result {
        try body(memoSlot ?? makeReceiverMemo())
    }

    /// Makes the link's memo, at its first publish read in place.
    @inline(never)
    private func makeReceiverMemo() -> UnsafeMutablePointer<ReceiverMemo> {
        let memo = UnsafeMutablePointer<ReceiverMemo>.allocate(capacity: 1)
        memo.initialize(to: ReceiverMemo())
        memoSlot = memo
        return memo
    }

    deinit {
        memoSlot?.deinitialize(count: 1)
        memoSlot?.deallocate()
    }

    // MARK: Inbox

    /// The wire size of the frames waiting to be taken by the request loop.
    var waitingBytes: Int { inbox.withLock { $0.bytes } }

    /// Queues a frame from the client (`bytes` long on the wire); true when no request loop is
    /// running, and the caller must start one.
    func received(_ item: InboundRequest, bytes: Int) -> Bool {
        inbox.withLock { inbox in
            inbox.frames.append(item)
            inbox.bytes += bytes
            defer { inbox.looping = true }
            return !inbox.looping
        }
    }

    /// The session this link carries when no frame waits, no request loop runs and the session
    /// was told of a sign of life within the last second: a frame received now may be answered at
    /// once for it without overtaking another. Only the connection's loop thread adds frames, so
    /// this holds until that thread queues one. Nil otherwise, or when not logged in.
    /// So is a frame that may be started (a publish forwarded to other nodes) only while fewer
    /// than `maxStarted` of the link's are unanswered.
    func callerAnsweringAtOnce(now: Duration) -> Caller? {
        inbox.withLock { inbox in Self.callerAnsweringAtOnce(inbox, now: now) }
    }

    /// `callerAnsweringAtOnce(now:)`, and when there is one, a call of `budget` taken from its
    /// rate budget under the same lock: `refusal` says why when the budget is spent.
    func callerAnsweringAtOnce(
        now: Duration, taking budget: CallRateLimiter.Budget, operation: @autoclosure () -> String
    ) -> (caller: Caller, refusal: RtmError?)? {
        inbox.withLock { inbox in
            guard let caller = Self.callerAnsweringAtOnce(inbox, now: now) else { return nil }
            do throws(RtmError) {
                try inbox.limiter.take(budget, app: caller.app, now: now, operation: operation())
                return (caller, nil)
            } catch {
                return (caller, error)
            }
        }
    }

    private static func callerAnsweringAtOnce(_ inbox: borrowing LinkInbox, now: Duration) -> Caller? {
        guard !inbox.looping, inbox.frames.isEmpty, inbox.started < maxStarted, let last = inbox.lastSignOfLife,
            now - last < .seconds(1)
        else {
            return nil
        }
        return inbox.caller
    }

    // MARK: Started requests

    /// How many of a link's requests may be started and not answered at once: a client pipelining
    /// publishes to users on other nodes has this many on their way to Redis at most, and the
    /// next waits in the request loop for one of them to be answered.
    static var maxStarted: Int { 256 }

    /// A request was started: its answer comes later (`startedAnswered`).
    func requestStarted() { inbox.withLock { $0.started += 1 } }

    /// A started request's answer was written.
    func startedAnswered() {
        let ready = inbox.withLock { inbox -> [CheckedContinuation<Void, Never>] in
            inbox.started -= 1
            guard !inbox.waitingForStarted.isEmpty else { return [] }
            var ready: [CheckedContinuation<Void, Never>] = []
            inbox.waitingForStarted.removeAll { waiter in
                guard inbox.started < waiter.below else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once fewer than `limit` of the link's started requests are unanswered (at once if
    /// they are already): with 1, once every answer of a started request is written.
    func startedBelow(_ limit: Int) async {
        guard inbox.withLock({ $0.started >= limit }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = inbox.withLock { inbox -> Bool in
                guard inbox.started >= limit else { return true }
                inbox.waitingForStarted.append((limit, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The request loop takes the frames queued so far, in order, or learns it must end (the
    /// next frame starts a new loop).
    func takeReceived() -> RequestLoopStep {
        inbox.withLock { inbox in
            guard inbox.frames.isEmpty else {
                defer {
                    inbox.frames = []
                    inbox.bytes = 0
                }
                return .frames(inbox.frames)
            }
            inbox.looping = false
            let report = inbox.closed && !inbox.closeReported
            if report { inbox.closeReported = true }
            return .drained(connectionClosed: report)
        }
    }

    /// The socket closed. True when no request loop is running, so the caller reports the close
    /// now; otherwise the running loop reports it once it has answered what was queued.
    func closeInbox() -> Bool {
        inbox.withLock { inbox in
            inbox.closed = true
            guard !inbox.looping, !inbox.closeReported else { return false }
            inbox.closeReported = true
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

    /// Takes one call of a client of `app` from the link's rate budget; throws when the current
    /// second's is spent.
    func takeRateBudget(_ budget: CallRateLimiter.Budget, app: AppID, now: Duration, operation: String) throws(RtmError) {
        try inbox.withLock { inbox throws(RtmError) in try inbox.limiter.take(budget, app: app, now: now, operation: operation) }
    }

    // MARK: Writing

    /// Sends an answer or any other frame built for this link alone.
    func reply(_ frame: ServerFrame) {
        if case .answer(let id, .done) = frame {
            socket.sendBinary(payloadCount: ServerFrame.okAnswerSize(id: id)) { ServerFrame.writeOkAnswer(id: id, into: $0) }
        } else {
            socket.sendBinary(frame.encode())
        }
    }

    /// Tells the client why it is being closed, then closes the connection with 1008.
    func closeAfterTelling(reason: RtmLinkStateChangeReason, detail: String) {
        reply(.closing(reason: reason, detail: detail))
        socket.close(code: .policyViolation, reason: detail)
    }

    // MARK: Login deadline

    /// Notes that the link logged in: its login deadline no longer applies.
    func markLoggedIn() {
        loggedIn.store(true, ordering: .releasing)
    }

    /// Closes the connection with 1008 and `reason` unless it has logged in; true when it closed.
    func closeIfNeverLoggedIn(reason: String) -> Bool {
        guard !loggedIn.load(ordering: .acquiring), socket.isOpen else { return false }
        socket.close(code: .policyViolation, reason: reason)
        return true
    }
}
