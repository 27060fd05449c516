import SwitchboardCore

/// Refuses a client's calls past the limits over any one-second window.
///
/// Two budgets, as the reference has them: published messages, and every other API call; lock
/// acquires draw on the other calls' budget and on one of their own. Login and heartbeats are
/// not counted. Each budget remembers the times of its last `limit`
/// calls; a call is refused when the oldest of them is less than a second old.
struct CallRateLimiter: Sendable {
    /// Which budget a call draws on.
    enum Budget { case publish, other, lockAcquire }

    private var publishes: SlidingWindow?
    private var others: SlidingWindow?
    private var lockAcquires: SlidingWindow?

    init(limits: Limits) {
        publishes = limits.publishesPerSecondPerClient.map(SlidingWindow.init(limit:))
        others = limits.otherCallsPerSecondPerClient.map(SlidingWindow.init(limit:))
        lockAcquires = limits.lockAcquiresPerSecondPerClient.map(SlidingWindow.init(limit:))
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
        case .lockAcquire:
            if let window = lockAcquires, !window.allows(now) { throw refusal(operation, window.limit, "lock acquires") }
            try take(.other, now: now, operation: operation)
            _ = lockAcquires?.take(now)
        }
    }

    private func refusal(_ operation: String, _ limit: Int, _ what: String) -> RtmError {
        RtmError(.operationRateExceedLimitation, operation: operation, reason: "more than \(limit) \(what) per second")
    }
}

/// The times of the last `limit` accepted calls, in a ring allocated on first use.
private struct SlidingWindow: Sendable {
    let limit: Int
    private var times: [Duration] = []
    private var oldest = 0

    init(limit: Int) { self.limit = limit }

    /// Whether `take(now)` would accept a call.
    func allows(_ now: Duration) -> Bool {
        limit > 0 && (times.count < limit || now - times[oldest] >= .seconds(1))
    }

    /// Accepts a call at `now` unless `limit` calls were accepted in the second before it.
    mutating func take(_ now: Duration) -> Bool {
        guard limit > 0 else { return false }
        if times.count < limit {
            times.append(now)
            return true
        }
        guard now - times[oldest] >= .seconds(1) else { return false }
        times[oldest] = now
        oldest = (oldest + 1) % limit
        return true
    }
}
