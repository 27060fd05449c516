import SwitchboardCore

/// When the join token of each joined stream channel runs out, and whether its member was told
/// (`tokenPrivilegeWillExpire` naming the channel, as the reference warns of a stream channel's
/// token). Kept by `TopicRouter` from the grants of `join` and `renewToken`.
struct JoinTokenExpiries {
    private struct Expiry {
        var at: UInt64
        var warned = false
    }

    /// By session, then channel: a session that ends is forgotten in one step.
    private var expiries: [SessionID: [ChannelKey: Expiry]] = [:]

    /// `session` holds `channel` on a token that runs out at `expiresAt` (Unix seconds); nil: one
    /// that never does. A renewed token is warned of again.
    mutating func granted(_ session: SessionID, _ channel: ChannelKey, until expiresAt: UInt64?) {
        expiries[session, default: [:]][channel] = expiresAt.map { Expiry(at: $0) }
        if expiries[session]?.isEmpty == true { expiries[session] = nil }
    }

    /// `session` left `channel`.
    mutating func left(_ session: SessionID, _ channel: ChannelKey) {
        granted(session, channel, until: nil)
    }

    /// `session` ended: it holds no channel any more.
    mutating func ended(_ session: SessionID) {
        expiries[session] = nil
    }

    /// The memberships whose token runs out within `warning` seconds of `now` (Unix seconds) and
    /// were not told yet, with the seconds left, in session then channel order; each is told once.
    mutating func due(now: UInt64, warning: UInt64) -> [(session: SessionID, channel: ChannelKey, secondsLeft: Int)] {
        var due: [(session: SessionID, channel: ChannelKey, secondsLeft: Int)] = []
        for (session, channels) in expiries {
            for (channel, expiry) in channels where !expiry.warned && expiry.at <= now + warning {
                expiries[session]?[channel]?.warned = true
                due.append((session, channel, Int(expiry.at > now ? expiry.at - now : 0)))
            }
        }
        return due.sorted { ($0.session, $0.channel.name) < ($1.session, $1.channel.name) }
    }

    /// How many memberships are watched (for tests).
    var count: Int { expiries.values.reduce(0) { $0 + $1.count } }
}
