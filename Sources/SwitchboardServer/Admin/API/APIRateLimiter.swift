import Synchronization
import SwitchboardCore

/// The calls each API key may make per second: a sliding window per key (by its digest), on the
/// server's clock.
final class APIRateLimiter: Sendable {
    private let callsPerSecond: Int
    private let clock: any SwitchboardClock
    private let windows = Mutex<[[UInt8]: SlidingWindow]>([:])

    init(callsPerSecond: Int, clock: any SwitchboardClock) {
        self.callsPerSecond = callsPerSecond
        self.clock = clock
    }

    /// Takes one call of the key with `digest`; false when the key is over its rate.
    func admit(_ digest: [UInt8]) -> Bool {
        let now = clock.now
        return windows.withLock { $0[digest, default: SlidingWindow(limit: callsPerSecond)].take(now) }
    }

    /// The refusal of a call over the rate.
    func refusal(_ method: String) -> APIFailure {
        APIFailure(
            status: 429, .operationRateExceedLimitation, operation: method,
            reason: "this API key made more than \(callsPerSecond) calls in the last second")
    }
}
