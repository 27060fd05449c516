import SwitchboardCore

/// Counts one client's calls in one-second windows and refuses those over the limits.
///
/// Two budgets, as the reference has them: published messages, and every other API call.
/// Login and heartbeats are not counted.
struct CallRateLimiter: Sendable {
    /// Which budget a call draws on.
    enum Budget { case publish, other }

    private let publishLimit: Int?
    private let otherLimit: Int?
    private var windowStart: Duration = .zero
    private var publishes = 0
    private var others = 0

    init(limits: Limits) {
        publishLimit = limits.publishesPerSecondPerClient
        otherLimit = limits.otherCallsPerSecondPerClient
    }

    /// Takes one call from `budget` at `now`; throws `operationRateExceedLimitation` when the
    /// budget of the current second is spent.
    mutating func take(_ budget: Budget, now: Duration, operation: String) throws(RtmError) {
        if now - windowStart >= .seconds(1) {
            windowStart = now
            publishes = 0
            others = 0
        }
        switch budget {
        case .publish:
            guard let limit = publishLimit else { return }
            guard publishes < limit else { throw refusal(operation, limit, "messages") }
            publishes += 1
        case .other:
            guard let limit = otherLimit else { return }
            guard others < limit else { throw refusal(operation, limit, "calls") }
            others += 1
        }
    }

    private func refusal(_ operation: String, _ limit: Int, _ what: String) -> RtmError {
        RtmError(.operationRateExceedLimitation, operation: operation, reason: "more than \(limit) \(what) per second")
    }
}
