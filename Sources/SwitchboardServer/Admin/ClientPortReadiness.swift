import Synchronization

/// The server's own readiness check, "listener": ready while the client port accepts
/// connections, not before it listens nor once shutdown has begun.
final class ClientPortReadiness: ReadinessCheck {
    let name = "listener"
    private let accepting = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)

    /// The client port accepts from now on.
    func listening() { accepting.store(true, ordering: .releasing) }

    /// Shutdown began: not ready from now on, whatever follows.
    func shuttingDown() { stopping.store(true, ordering: .releasing) }

    func check() async -> ReadinessCheckResult {
        if stopping.load(ordering: .acquiring) { return .notReady("shutting down") }
        return accepting.load(ordering: .acquiring) ? .ready : .notReady("client port not listening yet")
    }
}
