import SwitchboardCore

/// The pure rate bookkeeping of message channels: how many messages each channel carried in the
/// last second (the reference's 60 per channel, the excess discarded), and how often each session
/// subscribed to each channel lately (the reference's 2 per 5 s, the excess refused).
struct ChannelRates: Sendable {
    private struct Attempt: Hashable {
        let session: SessionID
        let channel: ChannelKey
    }

    private var messages: [ChannelKey: SlidingWindow] = [:]
    private var subscribes: [Attempt: SlidingWindow] = [:]
    /// Messages discarded over the per-channel rate since the last `takeDiscarded`.
    private(set) var discarded = 0
    /// Messages discarded since the start.
    private(set) var discardedTotal = 0

    /// Takes one message of `channel` at `now` under its app's rate of `perSecond` messages (nil:
    /// none); false when the channel is over its rate and the message is to be discarded. A window
    /// kept under another rate starts afresh.
    mutating func admitMessage(on channel: ChannelKey, now: Duration, perSecond: Int?) -> Bool {
        guard let limit = perSecond else { return true }
        if let window = messages[channel], window.limit != limit { messages[channel] = nil }
        let admitted = messages[channel, default: SlidingWindow(limit: limit)].take(now)
        if !admitted {
            discarded += 1
            discardedTotal += 1
        }
        return admitted
    }

    /// Takes one subscribe attempt of `session` to `channel` at `now` under `limits` (the
    /// channel's app's; a window already open keeps the figures it opened with); false when it is
    /// too frequent.
    mutating func admitSubscribe(_ session: SessionID, to channel: ChannelKey, now: Duration, limits: Limits) -> Bool {
        let window = SlidingWindow(limit: limits.messages.subscribeAttemptsPerChannel, per: limits.messages.subscribeAttemptWindow)
        return subscribes[Attempt(session: session, channel: channel), default: window].take(now)
    }

    /// How many messages were discarded since the last call, counting from zero again.
    mutating func takeDiscarded() -> Int {
        defer { discarded = 0 }
        return discarded
    }

    /// Forgets windows that no longer hold anything, so idle channels and ended sessions cost nothing.
    mutating func sweep(now: Duration) {
        messages = messages.filter { !$0.value.isIdle(at: now) }
        subscribes = subscribes.filter { !$0.value.isIdle(at: now) }
    }

    /// How many windows are kept (for tests).
    var windowCount: Int { messages.count + subscribes.count }
}
