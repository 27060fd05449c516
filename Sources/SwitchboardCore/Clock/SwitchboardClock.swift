import Foundation

/// The time source every module uses, so that timeouts can be driven by a test clock.
///
/// `now` is monotonic time since an arbitrary origin; `wallMilliseconds` is Unix time for timestamps
/// that users see.
public protocol SwitchboardClock: Sendable {
    /// Monotonic time since this clock's origin.
    var now: PortableDuration { get }
    /// Monotonic time to within a few milliseconds, cheaper to read than `now`: for the
    /// once-a-second bookkeeping of every request (rate budgets, signs of life: a one-second
    /// window may then close up to one tick early). Compare it only with other readings of
    /// `coarseNow` of the same clock.
    var coarseNow: PortableDuration { get }
    /// Milliseconds since 1970 for user-visible timestamps.
    var wallMilliseconds: UInt64 { get }
    /// Suspends until `now` reaches `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: PortableDuration) async throws
}

extension SwitchboardClock {
    /// `now`, for a clock with nothing cheaper.
    public var coarseNow: PortableDuration { now }

    /// Suspends for `duration` from now.
    public func sleep(for duration: PortableDuration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The real clock: the system's monotonic clock for deadlines (`ContinuousClock` on Linux), its
/// real-time clock for timestamps.
public struct SystemClock: SwitchboardClock {
    #if os(Linux) && !SWITCHBOARD_PORTABLE_TIME
    private let origin: ContinuousClock.Instant
    #else
    private let monotonic: MonotonicReadings
    #endif
    /// The coarse monotonic clock's reading at the origin, in nanoseconds (8 bytes, so the clock
    /// still fits an existential's inline buffer and `any SwitchboardClock` needs no box).
    private let coarseOrigin: Int64

    /// Creates a clock whose origin is the moment of creation.
    public init() {
        #if os(Linux) && !SWITCHBOARD_PORTABLE_TIME
        origin = ContinuousClock.now
        #else
        monotonic = MonotonicReadings()
        #endif
        coarseOrigin = Self.readCoarse()
    }

    #if os(Linux) && !SWITCHBOARD_PORTABLE_TIME
    public var now: PortableDuration { ContinuousClock.now - origin }

    public func sleep(until deadline: PortableDuration) async throws {
        try await ContinuousClock().sleep(until: origin + deadline, tolerance: nil)
    }
    #else
    public var now: PortableDuration { monotonic.now }

    public func sleep(until deadline: PortableDuration) async throws {
        try await monotonic.sleep(until: deadline)
    }
    #endif

    /// The kernel's coarse monotonic clock (its tick, a few milliseconds; read without a system
    /// call, several times faster than the precise one).
    public var coarseNow: PortableDuration { .nanoseconds(Self.readCoarse() - coarseOrigin) }

    /// The coarse monotonic clock, in nanoseconds: Linux's `CLOCK_MONOTONIC_COARSE`, Darwin's
    /// `CLOCK_MONOTONIC_RAW_APPROX` (the tick-grained reading of the clock `ContinuousClock` uses).
    private static func readCoarse() -> Int64 {
        #if os(Linux)
        MonotonicReadings.read(CLOCK_MONOTONIC_COARSE)
        #else
        MonotonicReadings.read(CLOCK_MONOTONIC_RAW_APPROX)
        #endif
    }

    public var wallMilliseconds: UInt64 {
        // The system clock read directly: every message is stamped, and `Date` costs more.
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec / 1_000_000)
    }
}

/// Monotonic time read from `CLOCK_MONOTONIC` and slept on with `Task.sleep(nanoseconds:)`:
/// `SystemClock`'s deadlines where `ContinuousClock` is missing (before macOS 13 / iOS 16). On
/// Linux it is compiled, and tested, all the same.
struct MonotonicReadings: Sendable {
    /// The reading at creation, in nanoseconds.
    let origin: Int64

    /// Readings from now on count from this moment.
    init() { origin = Self.read(CLOCK_MONOTONIC) }

    /// Time since the origin.
    var now: PortableDuration { .nanoseconds(Self.read(CLOCK_MONOTONIC) - origin) }

    /// Suspends until `now` reaches `deadline` (at once when it has); throws `CancellationError`
    /// when the task is cancelled.
    func sleep(until deadline: PortableDuration) async throws {
        let left = (deadline - now).wholeNanoseconds
        try await Task.sleep(nanoseconds: left > 0 ? UInt64(left) : 0)
    }

    /// `clock`'s reading in nanoseconds.
    static func read(_ clock: clockid_t) -> Int64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
