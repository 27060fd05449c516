/// A rate limit over a sliding window: at most `limit` events in any `window` (one second, say).
/// It remembers the times of the last `limit` accepted events, in a ring allocated on first use;
/// an event is refused while the oldest of them is less than `window` old.
public struct SlidingWindow: Sendable, Hashable {
    /// How many events the window admits.
    public let limit: Int
    /// How long the window is.
    public let window: Duration
    private var times: [Duration] = []
    private var oldest = 0
    private var newest: Duration?

    /// A window admitting `limit` events per `window`.
    public init(limit: Int, per window: Duration = .seconds(1)) {
        self.limit = limit
        self.window = window
    }

    /// Accepts an event at `now` unless `limit` events were accepted within `window` before it.
    public mutating func take(_ now: Duration) -> Bool {
        guard limit > 0 else { return false }
        if times.count < limit {
            times.append(now)
        } else {
            guard now - times[oldest] >= window else { return false }
            times[oldest] = now
            oldest = (oldest + 1) % limit
        }
        newest = now
        return true
    }

    /// Whether every event it accepted is older than `window` at `now`, so it holds no budget
    /// and can be dropped.
    public func isIdle(at now: Duration) -> Bool {
        newest.map { now - $0 >= window } ?? true
    }
}
