import SwitchboardCore

/// Refuses a client's calls past the limits over any one-second window.
///
/// Three budgets, as the reference has them: published messages, storage calls, and every other
/// API call; lock acquires draw on the other calls' budget and on one of their own.
/// Login and heartbeats are not counted. Each budget remembers the times of its last `limit`
/// calls; a call is refused when the oldest of them is less than a second old.
///
/// Every connection has one, so it holds only what its calls used: the limits are shared by all
/// copies, and a budget's window is made at its first call (never for an unlimited budget).
struct CallRateLimiter: Sendable {
    /// Which budget a call draws on.
    enum Budget: Int, CaseIterable { case publish, other, storage, lockAcquire }

    /// Calls per second of each budget, by its raw value (nil: unlimited).
    private final class PerSecond: Sendable {
        let limits: [Int?]
        init(_ limits: [Int?]) { self.limits = limits }
    }

    private let perSecond: PerSecond
    /// The windows of the limited budgets called so far.
    private var windows: [(budget: Budget, window: SlidingWindow)] = []

    init(limits: Limits) {
        perSecond = PerSecond(Budget.allCases.map { budget in
            switch budget {
            case .publish: limits.messages.publishesPerSecondPerClient
            case .other: limits.sessions.otherCallsPerSecondPerClient
            case .storage: limits.storage.callsPerSecondPerClient
            case .lockAcquire: limits.locks.acquiresPerSecondPerClient
            }
        })
    }

    /// Takes one call from `budget` at `now`; throws `operationRateExceedLimitation` when the
    /// budget has already been spent within the last second.
    mutating func take(_ budget: Budget, now: Duration, operation: String) throws(RtmError) {
        switch budget {
        case .publish: try take(budget, now: now, operation: operation, "messages")
        case .other: try take(budget, now: now, operation: operation, "calls")
        case .storage: try take(budget, now: now, operation: operation, "storage calls")
        case .lockAcquire:
            // Taken on a copy, kept only when the other calls' budget allows the call too.
            var copy = self
            try copy.take(.lockAcquire, now: now, operation: operation, "lock acquires")
            try copy.take(.other, now: now, operation: operation, "calls")
            self = copy
        }
    }

    private mutating func take(_ budget: Budget, now: Duration, operation: String, _ what: String) throws(RtmError) {
        guard let limit = perSecond.limits[budget.rawValue] else { return }
        let index: Int
        if let found = windows.firstIndex(where: { $0.budget == budget }) {
            index = found
        } else {
            windows.append((budget, SlidingWindow(limit: limit)))
            index = windows.count - 1
        }
        guard windows[index].window.take(now) else {
            throw RtmError(.operationRateExceedLimitation, operation: operation, reason: "more than \(limit) \(what) per second")
        }
    }
}
