/// A token bucket over the frames a peer sends: `framesPerSecond` refill each second, up to a
/// burst of as many. Pure; the engine feeds it the time of each read, as monotonic time since an
/// origin of its choosing (a `Duration`, whose layout is known where this is compiled: the engine
/// checks its limiter for every frame, and an optional clock instant is copied and tested through
/// the standard library's generic witnesses).
public struct FrameRateLimiter: Sendable {
    /// Frames allowed per second on average, and the largest burst.
    public let framesPerSecond: Int
    private var tokens: Double
    private var last: Duration?

    /// A full bucket for `framesPerSecond` (at least 1).
    public init(framesPerSecond: Int) {
        self.framesPerSecond = max(1, framesPerSecond)
        tokens = Double(self.framesPerSecond)
    }

    /// Takes `count` frames received at `now` (monotonic time since the origin every call shares);
    /// false once the peer is over the rate.
    public mutating func admit(_ count: Int, at now: Duration) -> Bool {
        if let last, now > last {
            let elapsed = now - last
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            tokens = min(Double(framesPerSecond), tokens + seconds * Double(framesPerSecond))
        }
        if last.map({ now > $0 }) ?? true { last = now }
        tokens -= Double(count)
        return tokens >= 0
    }
}
