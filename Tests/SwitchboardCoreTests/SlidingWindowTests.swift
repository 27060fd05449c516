import Testing
import SwitchboardCore

@Suite(.timeLimit(.minutes(2))) struct SlidingWindowTests {
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

    @Test func windowsInADictionaryChangeInPlaceAndApart() {
        var windows: [String: SlidingWindow] = [:]
        var accepted: [String: Int] = [:]
        for index in 0..<100 {
            let key = "c\(index % 3)"
            if windows[key, default: SlidingWindow(limit: 10)].take(.milliseconds(index)) { accepted[key, default: 0] += 1 }
        }
        // Each key admits its own 10 within the second, whatever the other keys took.
        #expect(accepted == ["c0": 10, "c1": 10, "c2": 10])
        #expect(windows.values.allSatisfy { !$0.isIdle(at: .milliseconds(100)) && $0.isIdle(at: .milliseconds(1_100)) })
    }
}
