import Synchronization
import SwitchboardCore

/// An extension module whose operation `x.hold` is answered only once the test opens the gate.
/// A server answers one connection's requests in order, so whatever a client sends after a
/// `hold` waits behind it: calls made back to back are all sent before any is answered, and a
/// request can be left unanswered for as long as a test needs (a timeout on the client's clock).
final class HoldingGate: Module, Sendable {
    let name = "holding-gate"
    private let state = Mutex<(open: Bool, held: Int, waiters: [CheckedContinuation<Void, Never>])>((false, 0, []))

    /// How many `hold` calls reached the module.
    var held: Int { state.withLock { $0.held } }

    func start(_ context: ModuleContext) async {
        context.bus.handleExtension("hold") { [self] _ in
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let open = state.withLock { state in
                    state.held += 1
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
            return .string("released")
        }
    }

    /// Answers every held call, and each later one at once.
    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
