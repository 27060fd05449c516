import Glibc
import Synchronization

/// A server's listening socket through its life: bound once by `start`, closed by `stop`
/// (also when `stop` comes while `start` is still binding).
final class ListeningSocket: Sendable {
    private struct State {
        var started = false
        var stopped = false
        var port: Int?
        var acceptor: LoopConfined<Acceptor?>?
    }

    private let state = Mutex(State())

    /// Binds `host:port` and accepts on a loop of `group`, handing each socket to `adopt`;
    /// returns the bound port. Throws `EALREADY` when started before.
    func start(host: String, port: Int, group: EventLoopGroup, adopt: @escaping Acceptor.Adopt) throws -> Int {
        let alreadyStarted = state.withLock { state -> Bool in
            defer { state.started = true }
            return state.started
        }
        if alreadyStarted { throw SocketError("start", code: EALREADY) }
        let (bound, acceptor): (Int, LoopConfined<Acceptor?>)
        do {
            (bound, acceptor) = try Acceptor.listen(host: host, port: port, group: group, adopt: adopt)
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        let stoppedMeanwhile = state.withLock { state -> Bool in
            state.port = bound
            if !state.stopped { state.acceptor = acceptor }
            return state.stopped
        }
        if stoppedMeanwhile { Acceptor.stop(acceptor) }
        return bound
    }

    /// Stops accepting.
    func stop() {
        let acceptor = state.withLock { state in
            state.stopped = true
            defer { state.acceptor = nil }
            return state.acceptor
        }
        if let acceptor { Acceptor.stop(acceptor) }
    }

    /// The bound port once started.
    var port: Int? { state.withLock { $0.port } }
}
