import Synchronization
import SwitchboardBench
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// One client contending for a lock, driven from its loop thread: it acquires with `retry`
/// (waiting in line when the lock is held), releases as soon as the lock is its own, and acquires
/// again, until stopped.
final class LockContender: AnswerSink {
    private enum Phase {
        /// Not contending (before the start, and once stopped and released).
        case idle
        /// An acquire is on its way; `request` is its id.
        case acquiring(request: UInt32)
        /// In line: the acquire was answered `acquired: false`; `lockGranted` comes next.
        case waiting
        /// The lock is this client's; its release is on its way.
        case releasing
    }

    private struct State {
        var phase = Phase.idle
        var running = false
        var nextId = Publisher.firstId
        var acquireSentAt: UInt64 = 0
        var waits = LatencyHistogram()
        var errors = 0
    }

    let index: Int
    private let lock: LockAddress
    private let watch: LockWatch
    private let connection = Mutex<WebSocketConnection?>(nil)
    private let state = Mutex(State())

    init(index: Int, lock: LockAddress, watch: LockWatch) {
        self.index = index
        self.lock = lock
        self.watch = watch
    }

    /// Acquire sent to the lock being this client's, while measuring.
    var waits: LatencyHistogram { state.withLock { $0.waits } }
    /// Requests refused and waits that failed.
    var errors: Int { state.withLock { $0.errors } }
    /// Whether it has stopped contending and holds nothing.
    var isIdle: Bool { state.withLock { if case .idle = $0.phase { true } else { false } } }

    func attach(_ socket: WebSocketConnection) { connection.withLock { $0 = socket } }

    /// Starts contending.
    func start() {
        state.withLock { $0.running = true }
        acquire()
    }

    /// Stops once the current turn is over (released, or the wait granted and released).
    func stop() { state.withLock { $0.running = false } }

    // MARK: On the loop thread

    func answered(_ id: UInt32, accepted: Bool, bytes: UnsafeRawBufferPointer, measuring: Bool) {
        guard accepted else {
            // A refused acquire or release: the turn is over either way.
            let again = state.withLock { state -> Bool in
                state.errors += 1
                state.phase = .idle
                return state.running
            }
            if again { acquire() }
            return
        }
        if case .acquireAnswer(let answered, let acquired, let token)? = LockScan.scan(Array(bytes)) {
            let mine = state.withLock { state -> Bool in
                // An acquire that waits may be granted before it is answered: its answer then
                // finds the lock already taken and released.
                guard case .acquiring(let request) = state.phase, request == answered else { return false }
                if !acquired { state.phase = .waiting }
                return acquired
            }
            if mine, let token { hold(token, measuring: measuring) }
            return
        }
        // A release answered: the turn is over.
        watch.pairDone()
        let again = state.withLock { state -> Bool in
            state.phase = .idle
            return state.running
        }
        if again { acquire() }
    }

    /// A push arrived: the lock was granted, or the wait failed.
    func pushed(_ bytes: [UInt8], measuring: Bool) {
        switch LockScan.scan(Array(bytes)) {
        case .granted(let token)?:
            let waiting = state.withLock { state -> Bool in
                switch state.phase {
                case .acquiring, .waiting: return true
                case .idle, .releasing: return false
                }
            }
            if waiting { hold(token, measuring: measuring) }
        case .waitFailed?:
            let again = state.withLock { state -> Bool in
                state.errors += 1
                state.phase = .idle
                return state.running
            }
            if again { acquire() }
        default:
            return
        }
    }

    private func hold(_ token: UInt64, measuring: Bool) {
        let now = MonotonicClock.now()
        state.withLock { state in
            state.phase = .releasing
            if measuring { state.waits.record(now &- state.acquireSentAt) }
        }
        watch.took(index, fencingToken: token, at: now, measuring: measuring)
        watch.releasing(index, at: MonotonicClock.now())
        _ = send(.lock(.releaseLock(lock)))
    }

    private func acquire() {
        let id = state.withLock { state -> UInt32 in
            let id = state.nextId
            state.phase = .acquiring(request: id)
            state.acquireSentAt = MonotonicClock.now()
            return id
        }
        _ = send(.lock(.acquireLock(lock, retry: true)), id: id)
    }

    /// Sends `operation` with `id`, or the next id; returns the id used.
    private func send(_ operation: ClientOperation, id: UInt32? = nil) -> UInt32 {
        let id = state.withLock { state -> UInt32 in
            let id = id ?? state.nextId
            state.nextId = max(state.nextId, id &+ 1)
            return id
        }
        connection.withLock { $0 }?.sendBinary(ClientFrame(id: id, operation).encode())
        return id
    }
}

/// What every contender for one lock shares: who holds it as the clients see it, the last
/// fencing token, and how long each hand-over took.
final class LockWatch: Sendable {
    private struct State {
        var holder: Int?
        var lastToken: UInt64 = 0
        var releasedAt: UInt64 = 0
        var doubleHolds = 0
        var tokenRegressions = 0
        var handovers = LatencyHistogram()
        var pairs = 0
    }

    private let state = Mutex(State())

    /// Acquire/release pairs completed so far.
    var pairs: Int { state.withLock { $0.pairs } }
    /// Times a client got the lock while another still held it.
    var doubleHolds: Int { state.withLock { $0.doubleHolds } }
    /// Acquisitions whose fencing token was not larger than the one before.
    var tokenRegressions: Int { state.withLock { $0.tokenRegressions } }
    /// From a holder sending its release to the next holder knowing the lock is its own.
    var handovers: LatencyHistogram { state.withLock { $0.handovers } }

    /// Contender `index` got the lock with `fencingToken` at `now`.
    func took(_ index: Int, fencingToken: UInt64, at now: UInt64, measuring: Bool) {
        state.withLock { state in
            if state.holder != nil { state.doubleHolds += 1 }
            state.holder = index
            if fencingToken <= state.lastToken { state.tokenRegressions += 1 }
            state.lastToken = max(state.lastToken, fencingToken)
            if measuring && state.releasedAt != 0 { state.handovers.record(now &- state.releasedAt) }
        }
    }

    /// Contender `index` is about to send its release.
    func releasing(_ index: Int, at now: UInt64) {
        state.withLock { state in
            if state.holder == index { state.holder = nil }
            state.releasedAt = now
        }
    }

    /// A release was answered.
    func pairDone() { state.withLock { $0.pairs += 1 } }
}
