import SwitchboardCore

/// The per-topic message rate: a one-second `SlidingWindow` for each topic of each stream channel,
/// whoever publishes in it.
struct TopicRateWindows: Sendable {
    private struct TopicKey: Hashable {
        let channel: ChannelKey
        let topic: String
    }

    let limit: Int?
    private var windows: [TopicKey: SlidingWindow] = [:]

    init(limit: Int?) { self.limit = limit }

    /// Takes one message of `topic` at `now`; false when `limit` were accepted in the second before.
    mutating func take(_ topic: String, in channel: ChannelKey, now: Duration) -> Bool {
        take(topic, in: channel, now: now, limit: limit)
    }

    /// Takes one message of `topic` at `now` under `limit` (the channel's app's, nil: none); a
    /// window kept under another limit starts afresh.
    mutating func take(_ topic: String, in channel: ChannelKey, now: Duration, limit: Int?) -> Bool {
        guard let limit else { return true }
        guard limit > 0 else { return false }
        let key = TopicKey(channel: channel, topic: topic)
        if let window = windows[key], window.limit != limit { windows[key] = nil }
        return windows[key, default: SlidingWindow(limit: limit)].take(now)
    }

    /// Forgets the windows with no message in the second before `now`: they hold no budget.
    mutating func dropIdle(now: Duration) {
        windows = windows.filter { !$0.value.isIdle(at: now) }
    }

    /// How many topics have a window now.
    var count: Int { windows.count }
}
