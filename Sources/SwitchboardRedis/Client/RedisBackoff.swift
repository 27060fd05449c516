/// How long to wait before each reconnection attempt: doubling from `initial` up to `maximum`,
/// each delay shortened by a random part (up to `jitter` of it), so the nodes of a cluster do not
/// all knock on a restarted Redis at the same instant.
public struct RedisBackoff: Sendable, Hashable {
    /// The delay before the first attempt after a drop.
    public var initial: Duration
    /// The longest delay.
    public var maximum: Duration
    /// The fraction of each delay that is random (0: none, 1: anywhere from zero to the delay).
    public var jitter: Double

    /// A backoff from 50 ms to 2 s, half of each delay random.
    public init(initial: Duration = .milliseconds(50), maximum: Duration = .seconds(2), jitter: Double = 0.5) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before attempt number `attempt` (1 for the first after a drop).
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        var full = initial
        for _ in 0..<doublings where full < maximum { full = full * 2 }
        full = min(full, maximum)
        guard jitter > 0 else { return full }
        let kept = 1 - jitter * Double.random(in: 0...1, using: &generator)
        return full * kept
    }

    /// The delay before attempt number `attempt`, with the system's random numbers.
    public func delay(attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &generator)
    }
}
