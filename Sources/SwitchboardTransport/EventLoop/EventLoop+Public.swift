/// A timer from `EventLoop.scheduleTimer(after:_:)`, for `cancel(_:)`.
public struct LoopTimer: Sendable, Hashable {
    let id: UInt64
}

/// What a client built on the loop (a Redis or an HTTP client) needs beyond `execute`: timers, and
/// knowing when submitted work was refused.
extension EventLoop {
    /// Runs `action` on this loop's thread after `delay`. Only on the loop's thread; a timer still
    /// pending when the loop shuts down never runs.
    public func scheduleTimer(after delay: Duration, _ action: @escaping () -> Void) -> LoopTimer {
        LoopTimer(id: schedule(after: delay, action))
    }

    /// Cancels `timer` if it has not fired. Only on the loop's thread.
    public func cancel(_ timer: LoopTimer) {
        cancelTimer(timer.id)
    }

    /// Like `execute`, but returns false (dropping `task`) when the loop has shut down, so a
    /// caller waiting for `task` can stop waiting.
    public func executeIfRunning(_ task: @escaping @Sendable () -> Void) -> Bool {
        submit(task)
    }
}
