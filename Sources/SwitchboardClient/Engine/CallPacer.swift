import SwitchboardCore

/// Spaces the calls the SDK makes by itself (the restore after a lost session) so that none
/// goes past the server's per-client budgets (`RateBudget`): for each budget it remembers when
/// its last calls went, and gives a call the earliest moment at which the budget has room.
///
/// The server counts a call when it arrives, a little after it leaves here, and counts each
/// budget over a sliding second; so the pacer counts over a slightly longer window, which keeps
/// a call that leaves on time from arriving early. Pure: time comes in with each call.
struct CallPacer: Sendable {
    /// The window the pacer counts a budget's calls over: the server's second, plus a margin.
    static let window: Duration = .milliseconds(1_100)

    private let perSecond: [RateBudget: Int]
    /// When the most recent calls of each budget went, oldest first (at most its limit of them).
    private var sent: [RateBudget: [Duration]] = [:]

    /// A pacer for the budgets of `limits` (the reference's by default, which the server applies
    /// unless configured otherwise).
    init(limits: Limits = Limits()) {
        var perSecond: [RateBudget: Int] = [:]
        for budget in RateBudget.allCases { perSecond[budget] = budget.callsPerSecond(under: limits) }
        self.perSecond = perSecond
    }

    /// Books the next call on `budget` (nil: a call that draws on none) at the earliest moment
    /// from `now` at which every budget it draws on has room, and returns that moment.
    mutating func book(_ budget: RateBudget?, now: Duration) -> Duration {
        guard let budget else { return now }
        var at = now
        for drawn in budget.drawn {
            guard let limit = perSecond[drawn], limit > 0, let times = sent[drawn], times.count >= limit else { continue }
            at = max(at, times[times.count - limit] + Self.window)
        }
        for drawn in budget.drawn where perSecond[drawn] != nil {
            var times = sent[drawn, default: []]
            times.append(at)
            if let limit = perSecond[drawn], times.count > limit { times.removeFirst(times.count - limit) }
            sent[drawn] = times
        }
        return at
    }
}
