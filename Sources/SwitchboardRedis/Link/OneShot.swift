import Synchronization

/// A continuation that may be resumed from any thread, at most once: the first result wins and
/// later ones are dropped. For a wait that ends on the loop or, if the loop is gone, elsewhere.
final class OneShot<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the waiter with `value` unless it was resumed already.
    func resume(_ value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
