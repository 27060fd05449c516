// The one place Core picks its time type (tools/check-sdk-platform-symbols.sh holds the SDK's
// targets to `PortableDuration` everywhere else).
//
// Swift's `Duration` needs macOS 13 / iOS 16, above the SDK's floor, so on Apple platforms Core,
// Wire and the SDK count time in `NanosecondDuration`, a stand-in with the part of `Duration`'s
// interface they use. On Linux `PortableDuration` is Swift's `Duration` itself, so the server
// compiles to exactly what it did. `-Xswiftc -DSWITCHBOARD_PORTABLE_TIME` picks the stand-in on
// Linux too, for building the SDK (tools/check-sdk-portable-build.sh); the server does not build
// that way, since its modules mix Core's time with the standard library's.
#if os(Linux) && !SWITCHBOARD_PORTABLE_TIME
/// A span of time: Swift's `Duration` (on Apple platforms, `NanosecondDuration`).
public typealias PortableDuration = Swift.Duration
#else
/// A span of time: `NanosecondDuration` here, Swift's `Duration` on Linux.
public typealias PortableDuration = NanosecondDuration
#endif

/// A span of time in whole nanoseconds, with the part of Swift's `Duration` interface that Core,
/// Wire and the SDK use: what they count time in where `Duration` is not available (before
/// macOS 13 / iOS 16). About 292 years either way; arithmetic that would go past that traps, as
/// integer arithmetic does.
public struct NanosecondDuration: Sendable, Hashable, Comparable, AdditiveArithmetic, CustomStringConvertible {
    /// The span in nanoseconds (negative for a span backwards).
    public var nanoseconds: Int64

    /// A span of `nanoseconds`.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// No time.
    public static let zero = NanosecondDuration(nanoseconds: 0)

    /// `seconds` seconds.
    public static func seconds<T: BinaryInteger>(_ seconds: T) -> Self { Self(nanoseconds: Int64(seconds) * 1_000_000_000) }
    /// `seconds` seconds, to the nearest nanosecond.
    public static func seconds(_ seconds: Double) -> Self { Self(nanoseconds: Int64((seconds * 1e9).rounded())) }
    /// `milliseconds` milliseconds.
    public static func milliseconds<T: BinaryInteger>(_ milliseconds: T) -> Self { Self(nanoseconds: Int64(milliseconds) * 1_000_000) }
    /// `milliseconds` milliseconds, to the nearest nanosecond.
    public static func milliseconds(_ milliseconds: Double) -> Self { Self(nanoseconds: Int64((milliseconds * 1e6).rounded())) }
    /// `microseconds` microseconds.
    public static func microseconds<T: BinaryInteger>(_ microseconds: T) -> Self { Self(nanoseconds: Int64(microseconds) * 1_000) }
    /// `nanoseconds` nanoseconds.
    public static func nanoseconds<T: BinaryInteger>(_ nanoseconds: T) -> Self { Self(nanoseconds: Int64(nanoseconds)) }

    /// Whole seconds and the attoseconds beyond them, both with the span's sign, as `Duration` gives them.
    public var components: (seconds: Int64, attoseconds: Int64) {
        let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return (seconds, rest * 1_000_000_000)
    }

    public static func + (a: Self, b: Self) -> Self { Self(nanoseconds: a.nanoseconds + b.nanoseconds) }
    public static func - (a: Self, b: Self) -> Self { Self(nanoseconds: a.nanoseconds - b.nanoseconds) }
    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }
    /// The span `count` times over.
    public static func * <T: BinaryInteger>(span: Self, count: T) -> Self { Self(nanoseconds: span.nanoseconds * Int64(count)) }
    /// The span `factor` times over, to the nearest nanosecond.
    public static func * (span: Self, factor: Double) -> Self { Self(nanoseconds: Int64((Double(span.nanoseconds) * factor).rounded())) }
    /// One `count`th of the span, rounded toward zero.
    public static func / <T: BinaryInteger>(span: Self, count: T) -> Self { Self(nanoseconds: span.nanoseconds / Int64(count)) }
    /// How many times `b` goes into `a`.
    public static func / (a: Self, b: Self) -> Double { Double(a.nanoseconds) / Double(b.nanoseconds) }

    /// Seconds with a unit, as `Duration` prints itself ("1.5 seconds").
    public var description: String { "\(Double(nanoseconds) / 1e9) seconds" }
}

extension PortableDuration {
    /// The span in whole nanoseconds, rounded toward zero (for `Task.sleep(nanoseconds:)`).
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
