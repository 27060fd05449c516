import Foundation

/// The time source every module uses, so that timeouts can be driven by a test clock.
///
/// `now` is monotonic time since an arbitrary origin; `wallMilliseconds` is Unix time for timestamps
/// that users see.
public protocol SwitchboardClock: Sendable {
    /// Monotonic time since this clock's origin.
    var now: Duration { get }
    /// Monotonic time to within a few milliseconds, cheaper to read than `now`: for the
    /// once-a-second bookkeeping of every request (rate budgets, signs of life: a one-second
    /// window may then close up to one tick early). Compare it only with other readings of
    /// `coarseNow` of the same clock.
    var coarseNow: Duration { get }
    /// Milliseconds since 1970 for user-visible timestamps.
    var wallMilliseconds: UInt64 { get }
    /// Suspends until `now` reaches `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Duration) async throws
}

extension SwitchboardClock {
    /// `now`, for a clock with nothing cheaper.
    public var coarseNow: Duration { now }

    /// Suspends for `duration` from now.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The real clock: `ContinuousClock` for deadlines, the system clock for timestamps.
public struct SystemClock: SwitchboardClock {
    private let origin: ContinuousClock.Instant
    /// The coarse monotonic clock's reading at the origin, in nanoseconds (8 bytes, so the clock
    /// still fits an existential's inline buffer and `any SwitchboardClock` needs no box).
    private let coarseOrigin: Int64

    /// Creates a clock whose origin is the moment of creation.
    public init() {
        origin = ContinuousClock.now
        coarseOrigin = Self.readCoarse()
    }

    public var now: Duration { ContinuousClock.now - origin }

    /// The kernel's coarse monotonic clock (its tick, a few milliseconds; read without a system
    /// call, several times faster than the precise one).
    public var coarseNow: Duration { .nanoseconds(Self.readCoarse() - coarseOrigin) }

    /// The coarse monotonic clock, in nanoseconds: Linux's `CLOCK_MONOTONIC_COARSE`, Darwin's
    /// `CLOCK_MONOTONIC_RAW_APPROX` (the tick-grained reading of the clock `ContinuousClock` uses).
    private static func readCoarse() -> Int64 {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        #else
        clock_gettime(CLOCK_MONOTONIC_RAW_APPROX, &time)
        #endif
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    public var wallMilliseconds: UInt64 {
        // The system clock read directly: every message is stamped, and `Date` costs more.
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec / 1_000_000)
    }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin + deadline, tolerance: nil)
    }
}
