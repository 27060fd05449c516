/// A rate limit over a sliding window: at most `limit` events in any `window` (one second, say).
/// It remembers the times of the last `limit` accepted events (the first inline, then all in a
/// ring allocated at the second); an event is refused while the oldest of them is less than
/// `window` old.
public struct SlidingWindow: Sendable, Hashable {
    /// How many events the window admits.
    public var limit: Int { Int(admits) }
    /// How long the window is.
    public let window: PortableDuration
    // Servers keep one window per channel, per subscribe attempt and per client budget, and most
    // see a single event before they go idle: the fields are packed (48 bytes), and the first
    // event's time is kept inline, the ring being made at the second.
    private let admits: Int32
    /// Index in `times` of the oldest accepted event once `times` is full; `holdingFirst` while
    /// only `first` holds an event.
    private var oldest: Int32 = 0
    private var first: PortableDuration = .zero
    private var times: [PortableDuration] = []

    private static let holdingFirst: Int32 = -1

    /// A window admitting `limit` events per `window`.
    public init(limit: Int, per window: PortableDuration = .seconds(1)) {
        admits = Int32(clamping: limit)
        self.window = window
    }

    /// Accepts an event at `now` unless `limit` events were accepted within `window` before it.
    public mutating func take(_ now: PortableDuration) -> Bool {
        guard limit > 0 else { return false }
        if times.isEmpty {
            if oldest != Self.holdingFirst {
                first = now
                oldest = Self.holdingFirst
                return true
            }
            if limit == 1 {
                guard now - first >= window else { return false }
                first = now
                return true
            }
            times = [first, now]
            first = .zero
            oldest = 0
            return true
        }
        if times.count < limit {
            times.append(now)
        } else {
            guard now - times[Int(oldest)] >= window else { return false }
            times[Int(oldest)] = now
            oldest = (oldest + 1) % admits
        }
        return true
    }

    /// The time of the newest accepted event.
    private var newest: PortableDuration? {
        guard !times.isEmpty else { return oldest == Self.holdingFirst ? first : nil }
        return times.count < limit ? times.last : times[(Int(oldest) + limit - 1) % limit]
    }

    /// Whether every event it accepted is older than `window` at `now`, so it holds no budget
    /// and can be dropped.
    public func isIdle(at now: PortableDuration) -> Bool {
        newest.map { now - $0 >= window } ?? true
    }
}
