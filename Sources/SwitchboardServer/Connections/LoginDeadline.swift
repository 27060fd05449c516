import Synchronization
import SwitchboardCore

/// Closes connections that have not logged in within `timeout` of opening, so sockets that never
/// log in (scanners, abandoned or hostile clients) do not hold server resources.
///
/// One countdown serves every connection: links wait in the order they opened, which is the order
/// of their deadlines, and one task, running only while some wait, sleeps until the first
/// deadline. A waiting link is held by its number, so a link that closed meanwhile is not kept
/// alive; one that logged in is passed over when its turn comes.
final class LoginDeadline<Connection: LinkConnection>: Sendable {
    private struct Waiting {
        let connection: UInt64
        let deadline: Duration
    }

    private struct State {
        /// Links in opening order; those before `head` are done.
        var waiting: [Waiting] = []
        var head = 0
        var countdown: Task<Void, Never>?
        var stopped = false
    }

    /// The clock the countdown runs on.
    let clock: any SwitchboardClock
    /// The time allowed; nil for no deadline.
    let timeout: Duration?
    /// Where a closed connection is reported.
    let refusals: RefusalLog
    /// The open link with a transport connection number, if any.
    private let find: @Sendable (UInt64) -> ClientLink<Connection>?
    private let state = Mutex(State())

    init(
        clock: any SwitchboardClock, timeout: Duration?, refusals: RefusalLog,
        find: @escaping @Sendable (UInt64) -> ClientLink<Connection>?
    ) {
        self.clock = clock
        self.timeout = timeout
        self.refusals = refusals
        self.find = find
    }

    /// Starts the countdown for `link`; it is closed at its deadline unless it has logged in.
    func start(for link: ClientLink<Connection>) {
        guard let timeout else { return }
        let waiting = Waiting(connection: link.socket.id, deadline: clock.now + timeout)
        state.withLock { state in
            guard !state.stopped else { return }
            state.waiting.append(waiting)
            guard state.countdown == nil else { return }
            state.countdown = Task { [self] in await countDown() }
        }
    }

    /// Ends the countdown (the server is stopping).
    func stop() {
        let countdown = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            state.waiting = []
            state.head = 0
            defer { state.countdown = nil }
            return state.countdown
        }
        countdown?.cancel()
    }

    private func countDown() async {
        while let deadline = nextDeadline() {
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            for connection in takeDue() {
                guard let link = find(connection), link.closeIfNeverLoggedIn(reason: "login timeout") else { continue }
                refusals.refused(link.socket.remoteAddress, "no login within \(timeout ?? .zero)")
            }
        }
    }

    /// The first deadline still waiting; nil (and the countdown ends) when no link waits.
    private func nextDeadline() -> Duration? {
        state.withLock { state in
            guard !state.stopped, state.head < state.waiting.count else {
                state.waiting = []
                state.head = 0
                state.countdown = nil
                return nil
            }
            return state.waiting[state.head].deadline
        }
    }

    /// Takes the links whose deadline has come, in order.
    private func takeDue() -> [UInt64] {
        let now = clock.now
        return state.withLock { state in
            var due: [UInt64] = []
            while state.head < state.waiting.count, state.waiting[state.head].deadline <= now {
                due.append(state.waiting[state.head].connection)
                state.head += 1
            }
            // Give the room of the links done back now and then, so a burst of openings does not
            // keep its queue.
            if state.head > 1024 && state.head * 2 > state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return due
        }
    }
}
