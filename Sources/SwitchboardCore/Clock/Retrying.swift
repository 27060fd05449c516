/// Retrying a step that waits on something outside the process coming back (a shared store's
/// connection reconnecting).
///
/// Paced in real time, not on the injected clock: what it waits for reconnects on real timers
/// (the Redis client's backoff), so a test's manual clock standing still must not stop the wait.
/// Timeouts a module decides itself stay on the injected clock.
public enum RealTimeRetry {
    /// Runs `step` until it succeeds, at most `attempts` times, `pause` apart; throws the last
    /// failure (at once when the task is cancelled during a pause).
    public static func run<T>(
        attempts: Int, pause: PortableDuration, isolation: isolated (any Actor)? = #isolation,
        _ step: () async throws(RtmError) -> T
    ) async throws(RtmError) -> T {
        let (seconds, attoseconds) = pause.components
        let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        var attempt = 1
        while true {
            do {
                return try await step()
            } catch {
                guard attempt < attempts, (try? await Task.sleep(nanoseconds: nanoseconds)) != nil else { throw error }
                attempt += 1
            }
        }
    }
}
