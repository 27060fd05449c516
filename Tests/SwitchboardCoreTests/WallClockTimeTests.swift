import Testing
import SwitchboardCore
import SwitchboardTestKit

/// Wall-clock instants: arithmetic in whole milliseconds, and the clock's reading.
@Suite(.timeLimit(.minutes(1))) struct WallClockTimeTests {
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    @Test func aDurationMovesAnInstantByWholeMilliseconds() {
        #expect((start + .seconds(10)).millisecondsSince1970 == 1_700_000_010_000)
        #expect((start + .milliseconds(1.9)).millisecondsSince1970 == 1_700_000_000_001)
        #expect((start - .seconds(1)).millisecondsSince1970 == 1_699_999_999_000)
        #expect(start + .seconds(-1) == start - .seconds(1))
    }

    @Test func theDifferenceOfTwoInstantsIsSigned() {
        #expect((start + .seconds(15)) - start == .seconds(15))
        #expect(start - (start + .milliseconds(250)) == .milliseconds(-250))
    }

    @Test func movingStaysWithinTheRepresentableInstants() {
        let epoch = WallClockTime(millisecondsSince1970: 0)
        #expect(epoch - .seconds(1) == epoch)
        let last = WallClockTime(millisecondsSince1970: .max)
        #expect(last + .seconds(1) == last)
    }

    @Test func instantsOrderByTime() {
        #expect(start < start + .milliseconds(1))
        #expect(start.secondsSince1970 == 1_700_000_000)
    }

    @Test func theManualClocksWallReadingMovesWithItsMonotonicOne() {
        let clock = ManualClock(wallOriginMilliseconds: 1_700_000_000_000)
        #expect(clock.wallNow == start)
        clock.advance(by: .milliseconds(2_500))
        #expect(clock.wallNow == start + .milliseconds(2_500))
    }

    @Test func theSystemClocksWallReadingIsItsWallMilliseconds() {
        let clock = SystemClock()
        let before = clock.wallMilliseconds
        let reading = clock.wallNow.millisecondsSince1970
        #expect(reading >= before && reading <= clock.wallMilliseconds)
    }
}
