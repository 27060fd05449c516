/// Waiting for the current task to be cancelled.
public enum Cancellation {
    /// Returns once the calling task is cancelled (at once when it already is).
    public static func wait() async {
        let waiter = Waiter()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter.park(continuation)
                if Task.isCancelled { waiter.wake() }
            }
        } onCancel: {
            waiter.wake()
        }
    }

    /// One parked continuation, resumed exactly once whichever of park and wake comes first.
    private final class Waiter: Sendable {
        private let state = PortableMutex<(continuation: CheckedContinuation<Void, Never>?, woken: Bool)>((nil, false))

        func park(_ continuation: CheckedContinuation<Void, Never>) {
            let resumeNow = state.withLock { state -> Bool in
                if state.woken { return true }
                state.continuation = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }

        func wake() {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.woken = true
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume()
        }
    }
}
