import SwitchboardCore

/// Refuses a client's calls past the limits over any one-second window.
///
/// Three budgets, as the reference has them: published messages, storage calls, and every other
/// API call; lock acquires draw on the other calls' budget and on one of their own.
/// Login and heartbeats are not counted. Each budget remembers the times of its last `limit`
/// calls; a call is refused when the oldest of them is less than a second old.
struct CallRateLimiter: Sendable {
    /// Which budget a call draws on.
    enum Budget { case publish, other, storage, lockAcquire }

    private var publishes: SlidingWindow?
    private var others: SlidingWindow?
    private var storage: SlidingWindow?
    private var lockAcquires: SlidingWindow?

    init(limits: Limits) {
        publishes = limits.publishesPerSecondPerClient.map { SlidingWindow(limit: $0) }
        others = limits.otherCallsPerSecondPerClient.map { SlidingWindow(limit: $0) }
        storage = limits.storageCallsPerSecondPerClient.map { SlidingWindow(limit: $0) }
        lockAcquires = limits.lockAcquiresPerSecondPerClient.map { SlidingWindow(limit: $0) }
    }

    /// Takes one call from `budget` at `now`; throws `operationRateExceedLimitation` when the
    /// budget has already been spent within the last second.
    mutating func take(_ budget: Budget, now: Duration, operation: String) throws(RtmError) {
        switch budget {
        case .publish:
            guard publishes != nil else { return }
            if !publishes!.take(now) { throw refusal(operation, publishes!.limit, "messages") }
        case .other:
            guard others != nil else { return }
            if !others!.take(now) { throw refusal(operation, others!.limit, "calls") }
        case .storage:
            guard storage != nil else { return }
            if !storage!.take(now) { throw refusal(operation, storage!.limit, "storage calls") }
        case .lockAcquire:
            // Taken on a copy, kept only when the other calls' budget allows the call too.
            var acquires = lockAcquires
            if acquires != nil, !acquires!.take(now) { throw refusal(operation, acquires!.limit, "lock acquires") }
            try take(.other, now: now, operation: operation)
            lockAcquires = acquires
        }
    }

    private func refusal(_ operation: String, _ limit: Int, _ what: String) -> RtmError {
        RtmError(.operationRateExceedLimitation, operation: operation, reason: "more than \(limit) \(what) per second")
    }
}
