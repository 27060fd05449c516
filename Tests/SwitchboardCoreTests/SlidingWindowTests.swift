import Testing
import SwitchboardCore

@Suite struct SlidingWindowTests {
    @Test func admitsTheLimitPerWindowThenSlides() {
        var window = SlidingWindow(limit: 2, per: .seconds(5))
        var taken: [Bool] = []
        for second in [0, 1, 4, 5, 5, 6] { taken.append(window.take(.seconds(second))) }
        #expect(taken == [true, true, false, true, false, true])
        #expect(!window.isIdle(at: .seconds(10)))
        #expect(window.isIdle(at: .seconds(11)))
    }

    @Test func idleOnlyOnceItsNewestEventIsAWindowOld() {
        var window = SlidingWindow(limit: 3, per: .seconds(10))
        #expect(window.isIdle(at: .zero))
        let taken = [0, 1, 2, 12, 13].map { window.take(.seconds($0)) }
        #expect(taken == [true, true, true, true, true])
        // The ring has wrapped: the newest event (13 s) sits before the oldest in memory.
        #expect(!window.isIdle(at: .seconds(22)))
        #expect(window.isIdle(at: .seconds(23)))
        #expect(window.limit == 3 && window.window == .seconds(10))
    }

    @Test(arguments: [1, 2, 3, 7])
    func agreesWithTheTimesOfItsLastAcceptedEvents(limit: Int) {
        var window = SlidingWindow(limit: limit, per: .milliseconds(100))
        var accepted: [Duration] = []
        var now = Duration.zero
        for step in 0..<2_000 {
            now += .milliseconds((step * 7919) % 61)
            let expected = accepted.count < limit || now - accepted[accepted.count - limit] >= .milliseconds(100)
            #expect(window.take(now) == expected)
            if expected { accepted.append(now) }
            let idle = accepted.last.map { now + .milliseconds(50) - $0 >= .milliseconds(100) } ?? true
            #expect(window.isIdle(at: now + .milliseconds(50)) == idle)
        }
    }

    @Test func aDictionaryOfWindows() {
        var windows: [String: SlidingWindow] = [:]
        for index in 0..<100 {
            _ = windows["c\(index % 3)", default: SlidingWindow(limit: 60)].take(.milliseconds(index))
        }
        #expect(windows.count == 3)
    }
}
