import SwitchboardCore

/// Spaces the calls the SDK makes by itself (the restore after a lost session) so that none
/// goes past the server's per-client budgets (`RateBudget`). The server counts a call when it
/// takes it, over a sliding second; the pacer remembers when the answers to each budget's last
/// calls came, and lets a call leave only once the answer to the call `limit` before it is at
/// least `window` old. The server took that earlier call before its answer left, and takes this
/// one after it leaves, so their gap on the server is longer than the pacer's, however late
/// either of them was carried out: causality, not timing, keeps the calls within the budget.
/// Pure: time comes in with each call.
struct CallPacer: Sendable {
    /// How old the answer to the call `limit` back must be: the server's second, plus a margin for
    /// the tick-grained clock it counts with.
    static let window: PortableDuration = .milliseconds(1_100)

    private let perSecond: [RateBudget: Int]
    /// When the answers to the most recent calls of each budget came, oldest first (at most its
    /// limit of them).
    private var answered: [RateBudget: [PortableDuration]] = [:]

    /// A pacer for the budgets of `limits` (the reference's by default, which the server applies
    /// unless configured otherwise).
    init(limits: Limits = Limits()) {
        var perSecond: [RateBudget: Int] = [:]
        for budget in RateBudget.allCases { perSecond[budget] = budget.callsPerSecond(under: limits) }
        self.perSecond = perSecond
    }

    /// The earliest moment, from `now`, at which a call on `budget` (nil: a call that draws on
    /// none) may leave: when every budget it draws on has room.
    func earliest(_ budget: RateBudget?, now: PortableDuration) -> PortableDuration {
        var at = now
        for drawn in budget?.drawn ?? [] {
            guard let limit = perSecond[drawn], limit > 0, let times = answered[drawn], times.count >= limit else { continue }
            at = max(at, times[times.count - limit] + Self.window)
        }
        return at
    }

    /// Notes that the server answered a call on `budget` at `at`, having counted it (every answer
    /// but a refusal as too frequent, which takes nothing from the budget).
    mutating func answered(_ budget: RateBudget?, at: PortableDuration) {
        for drawn in budget?.drawn ?? [] {
            guard let limit = perSecond[drawn] else { continue }
            var times = answered[drawn, default: []]
            times.append(at)
            if times.count > limit { times.removeFirst(times.count - limit) }
            answered[drawn] = times
        }
    }
}
