/// Whose turn it is to use the lock store: one operation at a time, the others waiting in the
/// order they asked. The lock actor owns it; it never suspends by itself.
struct StoreTurns {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Takes the turn if nobody has it; false when the caller must `wait`.
    mutating func take() -> Bool {
        guard !busy else { return false }
        busy = true
        return true
    }

    /// Queues a caller that found the turn taken; `pass` resumes it in its order.
    mutating func wait(_ continuation: CheckedContinuation<Void, Never>) {
        waiting.append(continuation)
    }

    /// Ends the current turn: returns the next waiter, who now has the turn, or frees the turn.
    mutating func pass() -> CheckedContinuation<Void, Never>? {
        guard !waiting.isEmpty else {
            busy = false
            return nil
        }
        return waiting.removeFirst()
    }
}
