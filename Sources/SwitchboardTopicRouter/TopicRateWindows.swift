import SwitchboardCore

/// The per-topic message rate: for each topic of each stream channel, the times of its last
/// `limit` accepted messages, whoever published them. A message is refused when the oldest of them
/// is less than a second old.
struct TopicRateWindows: Sendable {
    private struct TopicKey: Hashable {
        let channel: ChannelKey
        let topic: String
    }

    private struct Window {
        var times: [Duration] = []
        var oldest = 0
        var newest: Duration = .zero
    }

    let limit: Int?
    private var windows: [TopicKey: Window] = [:]

    init(limit: Int?) { self.limit = limit }

    /// Takes one message of `topic` at `now`; false when `limit` were accepted in the second before.
    mutating func take(_ topic: String, in channel: ChannelKey, now: Duration) -> Bool {
        guard let limit else { return true }
        guard limit > 0 else { return false }
        let key = TopicKey(channel: channel, topic: topic)
        var window = windows.removeValue(forKey: key) ?? Window()
        defer { windows[key] = window }
        if window.times.count < limit {
            window.times.append(now)
        } else {
            guard now - window.times[window.oldest] >= .seconds(1) else { return false }
            window.times[window.oldest] = now
            window.oldest = (window.oldest + 1) % limit
        }
        window.newest = now
        return true
    }

    /// Forgets the windows with no message in the second before `now`: they hold no budget.
    mutating func dropIdle(now: Duration) {
        windows = windows.filter { now - $0.value.newest < .seconds(1) }
    }

    /// How many topics have a window now.
    var count: Int { windows.count }
}
