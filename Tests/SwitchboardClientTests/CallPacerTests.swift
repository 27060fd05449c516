import Testing
import SwitchboardCore
@testable import SwitchboardClient

@Suite(.timeLimit(.minutes(1))) struct CallPacerTests {
    @Test func aBudgetsCallsAreSpreadSoNoWindowHoldsMoreThanItsLimit() {
        var pacer = CallPacer()
        let times = (0..<50).map { _ in pacer.book(.other, now: .zero) }
        // The reference's 20 other calls a second: the first 20 at once, then each 1.1 s after
        // the one 20 before it.
        #expect(times.prefix(20).allSatisfy { $0 == .zero })
        #expect(times[20] == CallPacer.window && times[40] == CallPacer.window * 2)
        for index in 20..<times.count { #expect(times[index] - times[index - 20] >= CallPacer.window) }
        // Another budget is counted apart; a call of none goes at once.
        #expect(pacer.book(.storage, now: .zero) == .zero)
        #expect(pacer.book(nil, now: .zero) == .zero)
    }

    @Test func aLockAcquireWaitsForRoomInBothOfItsBudgets() {
        var pacer = CallPacer()
        for _ in 0..<20 { _ = pacer.book(.other, now: .zero) }
        // Its own budget has room, the other calls' has not.
        #expect(pacer.book(.lockAcquire, now: .zero) == CallPacer.window)
        // Unlimited budgets never wait.
        var unlimited = CallPacer(limits: .withoutRateLimits)
        #expect((0..<100).allSatisfy { _ in unlimited.book(.publish, now: .seconds(1)) == .seconds(1) })
    }
}
