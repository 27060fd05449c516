import Synchronization
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
    /// Which budget a call draws on (the operation says: `ClientOperation.rateBudget`).
    typealias Budget = RateBudget

    /// Calls per second of each budget, by its raw value (-1: unlimited), shared by every copy and
    /// changed in place by `update` (a relaxed load per call: a new figure reaches each
    /// connection at its next call).
    private final class PerSecond: Sendable {
        private let limits: [Slot]

        /// One budget's figure.
        private final class Slot: Sendable {
            let value: Atomic<Int>
            init(_ value: Int?) { self.value = Atomic(value ?? -1) }
        }

        init(_ limits: [Int?]) { self.limits = limits.map(Slot.init) }

        func limit(_ budget: Budget) -> Int? {
            let value = limits[budget.rawValue].value.load(ordering: .relaxed)
            return value < 0 ? nil : value
        }

        func set(_ budget: Budget, _ limit: Int?) { limits[budget.rawValue].value.store(limit ?? -1, ordering: .relaxed) }
    }

    private let perSecond: PerSecond
    /// The windows of the limited budgets called so far.
    private var windows: [(budget: Budget, window: SlidingWindow)] = []

    init(limits: Limits) {
        perSecond = PerSecond(Budget.allCases.map { $0.callsPerSecond(under: limits) })
    }

    /// Takes the per-client rates of `limits`, for this limiter and every copy of it (every
    /// connection's): each connection's window of a changed budget starts afresh at its next call.
    func update(_ limits: Limits) {
        for budget in Budget.allCases { perSecond.set(budget, budget.callsPerSecond(under: limits)) }
    }

    /// Takes one call from `budget` (and from each other budget it draws on) at `now`; throws
    /// `operationRateExceedLimitation` when one of them has already been spent within the last
    /// second, and then takes from none.
    mutating func take(_ budget: Budget, now: Duration, operation: String) throws(RtmError) {
        guard budget.drawn.count > 1 else { return try take(one: budget, now: now, operation: operation) }
        var copy = self
        for drawn in budget.drawn { try copy.take(one: drawn, now: now, operation: operation) }
        self = copy
    }

    private mutating func take(one budget: Budget, now: Duration, operation: String) throws(RtmError) {
        guard let limit = perSecond.limit(budget) else { return }
        let index: Int
        if let found = windows.firstIndex(where: { $0.budget == budget }) {
            index = found
            if windows[index].window.limit != limit { windows[index].window = SlidingWindow(limit: limit) }
        } else {
            windows.append((budget, SlidingWindow(limit: limit)))
            index = windows.count - 1
        }
        guard windows[index].window.take(now) else {
            throw RtmError(.operationRateExceedLimitation, operation: operation, reason: "more than \(limit) \(Self.what(budget)) per second")
        }
    }

    private static func what(_ budget: Budget) -> String {
        switch budget {
        case .publish: "messages"
        case .other: "calls"
        case .storage: "storage calls"
        case .lockAcquire: "lock acquires"
        }
    }
}
