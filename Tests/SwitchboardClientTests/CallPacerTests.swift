import Testing
import SwitchboardCore
@testable import SwitchboardClient

@Suite(.timeLimit(.minutes(1))) struct CallPacerTests {
    @Test func aCallLeavesOnlyOnceTheAnswerToTheCallItsLimitBackIsAWindowOld() {
        var pacer = CallPacer()
        // The reference's 20 other calls a second: twenty leave at once.
        for index in 0..<20 {
            #expect(pacer.earliest(.other, now: .milliseconds(index)) == .milliseconds(index))
            pacer.answered(.other, at: .milliseconds(index * 10))
        }
        // The 21st waits for the first answer (at 0) to be 1.1 s old, the 22nd for the second.
        #expect(pacer.earliest(.other, now: .milliseconds(200)) == CallPacer.window)
        pacer.answered(.other, at: .milliseconds(1_150))
        #expect(pacer.earliest(.other, now: .milliseconds(1_050)) == CallPacer.window + .milliseconds(10))
        // A late answer pushes the call that limit after it later, whatever the booking was.
        var late = CallPacer()
        for _ in 0..<19 { late.answered(.other, at: .zero) }
        late.answered(.other, at: .seconds(3))
        for _ in 0..<19 { late.answered(.other, at: .seconds(3)) }
        #expect(late.earliest(.other, now: .seconds(3)) == .seconds(3) + CallPacer.window)
        // Another budget is counted apart; a call of none goes at once.
        #expect(pacer.earliest(.storage, now: .zero) == .zero)
        #expect(pacer.earliest(nil, now: .zero) == .zero)
    }

    @Test func aLockAcquireWaitsForRoomInBothOfItsBudgets() {
        var pacer = CallPacer()
        for _ in 0..<20 { pacer.answered(.other, at: .zero) }
        // Its own budget has room, the other calls' has not.
        #expect(pacer.earliest(.lockAcquire, now: .zero) == CallPacer.window)
        // An acquire counts against both.
        var acquires = CallPacer()
        for _ in 0..<10 { acquires.answered(.lockAcquire, at: .zero) }
        #expect(acquires.earliest(.lockAcquire, now: .zero) == CallPacer.window)
        #expect(acquires.earliest(.other, now: .zero) == .zero)
        // Unlimited budgets never wait.
        var unlimited = CallPacer(limits: .withoutRateLimits)
        for _ in 0..<100 { unlimited.answered(.publish, at: .zero) }
        #expect(unlimited.earliest(.publish, now: .seconds(1)) == .seconds(1))
    }
}
