import SwitchboardTestKit
import Testing
@testable import SwitchboardCore

/// `NanosecondDuration`, what the SDK counts time in on Apple platforms before `Duration`, gives
/// what Swift's `Duration` gives for every operation Core, Wire and the SDK use; and
/// `MonotonicReadings`, the clock behind it there, moves forward and sleeps until its deadlines.
@Suite(.timeLimit(.minutes(1))) struct PortableDurationTests {
    /// Both types' `components` for one span made each way.
    static func same(_ stand: NanosecondDuration, _ swift: Swift.Duration) -> Bool {
        stand.components == swift.components
    }

    @Test func everyWayOfMakingASpanGivesDurationsComponents() {
        var generator = SeededGenerator(seed: 41)
        for _ in 0..<2_000 {
            let whole = Int64.random(in: -4_000_000...4_000_000, using: &generator)
            #expect(Self.same(.seconds(whole), .seconds(whole)))
            #expect(Self.same(.milliseconds(whole), .milliseconds(whole)))
            #expect(Self.same(.microseconds(whole), .microseconds(whole)))
            #expect(Self.same(.nanoseconds(whole), .nanoseconds(whole)))
            // Fractions: Duration keeps attoseconds, the stand-in whole nanoseconds, so they agree
            // to the nanosecond.
            let fraction = Double.random(in: -10_000...10_000, using: &generator)
            #expect(abs(NanosecondDuration.seconds(fraction).nanoseconds - Swift.Duration.seconds(fraction).wholeNanoseconds) <= 1)
            #expect(abs(NanosecondDuration.milliseconds(fraction).nanoseconds - Swift.Duration.milliseconds(fraction).wholeNanoseconds) <= 1)
        }
        #expect(Self.same(.zero, .zero))
    }

    @Test func arithmeticAndOrderAreDurations() {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<2_000 {
            let (x, y) = (Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator),
                          Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator))
            let (a, b) = (NanosecondDuration.nanoseconds(x), NanosecondDuration.nanoseconds(y))
            let (c, d) = (Swift.Duration.nanoseconds(x), Swift.Duration.nanoseconds(y))
            let count = Int.random(in: 1...1_000, using: &generator)
            #expect(Self.same(a + b, c + d))
            #expect(Self.same(a - b, c - d))
            #expect(Self.same(a * count, c * count))
            // Duration keeps the fraction of a nanosecond that the stand-in drops (toward zero).
            #expect((a / count).nanoseconds == (c / count).wholeNanoseconds)
            #expect((a < b) == (c < d) && (a == b) == (c == d))
            #expect(a.clamped(to: .zero...(.seconds(300))).components == c.clamped(to: .zero...(.seconds(300))).components)
            if y != 0 { #expect(abs(a / b - c / d) <= 1e-9 * max(1, abs(c / d))) }
            #expect(a.nanoseconds == x && c.wholeNanoseconds == x)
        }
        var total = NanosecondDuration.seconds(1)
        total += .milliseconds(500)
        total -= .milliseconds(250)
        #expect(total == .milliseconds(1_250))
        #expect(NanosecondDuration.seconds(1.5).description == Swift.Duration.seconds(1.5).description)
    }

    @Test func theMonotonicReadingsMoveForwardAndSleepUntilTheDeadline() async throws {
        let clock = MonotonicReadings()
        let start = clock.now
        try await clock.sleep(until: start + .milliseconds(30))
        let woke = clock.now
        #expect(woke >= start + .milliseconds(30))
        // A deadline already past returns at once.
        try await clock.sleep(until: start)
        #expect(clock.now >= woke)
        // Cancelled while asleep: it throws instead of waiting out the deadline.
        let sleeper = Task { try await clock.sleep(until: clock.now + .seconds(60)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
