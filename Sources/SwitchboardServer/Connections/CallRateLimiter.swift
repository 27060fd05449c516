import SwitchboardCore

/// Refuses a client's calls past the limits over any one-second window.
///
/// Three budgets, as the reference has them: published messages, storage calls, and every other
/// API call; lock acquires draw on the other calls' budget and on one of their own.
/// Login and heartbeats are not counted. Each budget remembers the times of its last `limit`
/// calls; a call is refused when the oldest of them is less than a second old.
///
/// Every connection has one, so it holds only what its calls used: the figures are its caller's
/// app's, read from the limits book again whenever it has put another edition in force (so a
/// reload reaches each connection at its next call, and a window kept under another figure starts
/// afresh), and a budget's window is made at its first call (never for an unlimited budget).
struct CallRateLimiter: Sendable {
    /// Which budget a call draws on (the operation says: `ClientOperation.rateBudget`).
    typealias Budget = RateBudget

    /// The limits in force, shared by every copy.
    private let limits: LimitsBook
    /// The windows of the limited budgets called so far.
    private var windows: [(budget: Budget, window: SlidingWindow)] = []
    /// The calls per second of each budget, as last read: for `app`, from the book when it had
    /// made `replacements` replacements. Read again when either differs: a call reads one atomic
    /// number instead of the book (its lock, the app's limits).
    private var figures: (replacements: UInt64, app: AppID, perSecond: CallsPerSecond)?

    /// The calls per second of each budget for one app, held inline in 16 bytes (every
    /// connection has a limiter): a call reads its figure without counting a reference.
    private struct CallsPerSecond {
        /// By budget, in `RateBudget` order; -1 for unlimited.
        private let figures: (Int32, Int32, Int32, Int32)

        init(_ limits: borrowing Limits) {
            func figure(_ budget: Budget) -> Int32 {
                budget.callsPerSecond(under: limits).map { Int32(clamping: max(0, $0)) } ?? -1
            }
            figures = (figure(.publish), figure(.other), figure(.storage), figure(.lockAcquire))
        }

        /// Calls per second of `budget`; nil when unlimited.
        subscript(budget: Budget) -> Int? {
            let figure = switch budget {
            case .publish: figures.0
            case .other: figures.1
            case .storage: figures.2
            case .lockAcquire: figures.3
            }
            return figure < 0 ? nil : Int(figure)
        }
    }

    init(limitsBook: LimitsBook) {
        limits = limitsBook
    }

    /// A limiter under `limits` for every app.
    init(limits: Limits) {
        self.init(limitsBook: LimitsBook(limits: limits))
    }

    /// Takes one call of a client of `app` from `budget` (and from each other budget it draws on)
    /// at `now`; throws `operationRateExceedLimitation` when one of them has already been spent
    /// within the last second, and then takes from none. (`operation` names the call in that
    /// error, and is made only then.)
    mutating func take(_ budget: Budget, app: AppID, now: Duration, operation: @autoclosure () -> String) throws(RtmError) {
        let perSecond = callsPerSecond(app: app)
        guard let other = budget.alsoDrawn else {
            return try take(one: budget, limit: perSecond[budget], now: now, operation: operation)
        }
        var copy = self
        try copy.take(one: budget, limit: perSecond[budget], now: now, operation: operation)
        try copy.take(one: other, limit: perSecond[other], now: now, operation: operation)
        self = copy
    }

    /// The calls per second of each budget for a client of `app`: read from the book only when
    /// it has put another edition in force since the last read, or for another app.
    private mutating func callsPerSecond(app: AppID) -> CallsPerSecond {
        let replacements = limits.replacementCount
        if let figures, figures.replacements == replacements, figures.app == app { return figures.perSecond }
        let perSecond = limits.withLimits(for: app) { CallsPerSecond($0) }
        figures = (replacements, app, perSecond)
        return perSecond
    }

    private mutating func take(one budget: Budget, limit: Int?, now: Duration, operation: () -> String) throws(RtmError) {
        guard let limit else { return }
        let index: Int
        if let found = windows.firstIndex(where: { $0.budget == budget }) {
            index = found
            if windows[index].window.limit != limit { windows[index].window = SlidingWindow(limit: limit) }
        } else {
            windows.append((budget, SlidingWindow(limit: limit)))
            index = windows.count - 1
        }
        guard windows[index].window.take(now) else {
            throw RtmError(.operationRateExceedLimitation, operation: operation(), reason: "more than \(limit) \(Self.what(budget)) per second")
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
