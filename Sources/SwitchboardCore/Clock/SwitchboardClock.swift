import Foundation

/// The time source every module uses, so that timeouts can be driven by a test clock.
///
/// `now` is monotonic time since an arbitrary origin; `wallMilliseconds` is Unix time for timestamps
/// that users see.
public protocol SwitchboardClock: Sendable {
    /// Monotonic time since this clock's origin.
    var now: Duration { get }
    /// Milliseconds since 1970 for user-visible timestamps.
    var wallMilliseconds: UInt64 { get }
    /// Suspends until `now` reaches `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Duration) async throws
}

extension SwitchboardClock {
    /// Suspends for `duration` from now.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The real clock: `ContinuousClock` for deadlines, the system clock for timestamps.
public struct SystemClock: SwitchboardClock {
    private let origin: ContinuousClock.Instant

    /// Creates a clock whose origin is the moment of creation.
    public init() { origin = ContinuousClock.now }

    public var now: Duration { ContinuousClock.now - origin }

    public var wallMilliseconds: UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin + deadline, tolerance: nil)
    }
}
