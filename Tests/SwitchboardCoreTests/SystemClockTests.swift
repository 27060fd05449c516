import Testing
import SwitchboardCore

/// The real clock's two monotonic readings move together.
@Suite(.timeLimit(.minutes(2))) struct SystemClockTests {
    @Test func theCoarseReadingFollowsThePreciseOneWithinAFewMilliseconds() async throws {
        let clock = SystemClock()
        let (preciseBefore, coarseBefore) = (clock.now, clock.coarseNow)
        try await Task.sleep(for: .milliseconds(60))
        let (preciseAfter, coarseAfter) = (clock.now, clock.coarseNow)
        let (precise, coarse) = (preciseAfter - preciseBefore, coarseAfter - coarseBefore)
        #expect(precise >= .milliseconds(60))
        // The coarse clock advances once per kernel tick (at most 10 ms here).
        #expect(coarse >= precise - .milliseconds(20))
        #expect(coarse <= precise + .milliseconds(20))
        #expect(clock.coarseNow >= coarseAfter)
    }

    @Test func theClockFitsAnExistentialWithoutABox() {
        // `any SwitchboardClock` holds up to three words inline; past that every module's clock
        // read goes through a heap box.
        #expect(MemoryLayout<SystemClock>.size <= 3 * MemoryLayout<Int>.size)
    }
}
