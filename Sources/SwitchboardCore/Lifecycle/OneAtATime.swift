/// Runs one operation at a time, the others waiting in arrival order, even when an operation
/// suspends (a store call): what an operation reads and what it then announces are never
/// interleaved with another operation's. An actor's own isolation does not give this: an actor
/// runs other calls while one is suspended.
public final class OneAtATime: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []

        /// Takes the turn if it is free.
        mutating func take() -> Bool {
            guard !busy else { return false }
            busy = true
            return true
        }
    }

    private let state = PortableMutex(State())

    /// Nobody has the turn yet.
    public init() {}

    /// Runs `body` once every operation that came before has finished, on the caller's actor.
    public func run<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws(RtmError) -> T
    ) async throws(RtmError) -> T {
        if !state.withLock({ $0.take() }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let taken = state.withLock { state -> Bool in
                    if state.take() { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if taken { continuation.resume() }
            }
        }
        defer { handOver() }
        return try await body()
    }

    /// Passes the turn to the longest-waiting operation, or frees it.
    private func handOver() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
