/// An instant of wall-clock time, in whole milliseconds since 1970 (UTC).
///
/// What a store keeps when a deadline or a moment must mean the same in another process: a lock's
/// ttl, a session's last sign of life, when a user was last seen. A monotonic reading (`now`) is
/// only meaningful to the process that took it; every node of a cluster reads this one alike
/// (within their clocks' drift).
public struct WallClockTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970 (UTC).
    public var millisecondsSince1970: UInt64

    /// The instant `millisecondsSince1970` milliseconds after 1970.
    public init(millisecondsSince1970: UInt64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Whole seconds since 1970, as token expiries count.
    public var secondsSince1970: UInt64 { millisecondsSince1970 / 1000 }

    public var description: String { "\(millisecondsSince1970) ms since 1970" }

    public static func < (a: Self, b: Self) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }

    /// The instant `duration` later (earlier when negative), in whole milliseconds, kept within
    /// 1970 and the largest instant.
    public static func + (time: Self, duration: PortableDuration) -> Self {
        let delta = duration.wholeMilliseconds
        let moved = delta >= 0
            ? time.millisecondsSince1970.addingReportingOverflow(delta.magnitude)
            : time.millisecondsSince1970.subtractingReportingOverflow(delta.magnitude)
        return Self(millisecondsSince1970: moved.overflow ? (delta >= 0 ? .max : 0) : moved.partialValue)
    }

    /// The instant `duration` earlier.
    public static func - (time: Self, duration: PortableDuration) -> Self { time + (.zero - duration) }

    /// How long from `b` to `a` (negative when `a` is earlier).
    public static func - (a: Self, b: Self) -> PortableDuration {
        .milliseconds(Int64(bitPattern: a.millisecondsSince1970 &- b.millisecondsSince1970))
    }
}

extension PortableDuration {
    /// The duration in whole milliseconds, rounded toward zero.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1000 &+ attoseconds / 1_000_000_000_000_000
    }
}

extension SwitchboardClock {
    /// The wall clock's reading now (`wallMilliseconds`), for what a store keeps.
    public var wallNow: WallClockTime { WallClockTime(millisecondsSince1970: wallMilliseconds) }
}
