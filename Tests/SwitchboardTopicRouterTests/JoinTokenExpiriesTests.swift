import Testing
import SwitchboardCore
@testable import SwitchboardTopicRouter

@Suite(.timeLimit(.minutes(2))) struct JoinTokenExpiriesTests {
    let live = ChannelKey(app: "app", .stream, "live")
    let side = ChannelKey(app: "app", .stream, "side")

    @Test func eachTokenIsDueOnceAndLeavingOrEndingForgetsIt() {
        var expiries = JoinTokenExpiries()
        expiries.granted(SessionID(1), live, until: 100)
        expiries.granted(SessionID(1), side, until: 100)
        expiries.granted(SessionID(2), live, until: nil)
        expiries.granted(SessionID(3), live, until: 100)
        #expect(expiries.count == 3)
        #expect(expiries.due(now: 60, warning: 30).isEmpty)
        expiries.left(SessionID(1), side)
        expiries.ended(SessionID(3))
        let due = expiries.due(now: 75, warning: 30)
        #expect(due.map(\.session) == [SessionID(1)] && due.map(\.channel) == [live] && due.map(\.secondsLeft) == [25])
        #expect(expiries.due(now: 99, warning: 30).isEmpty)
        // Renewed: due again near the new end; past its end it says 0 seconds.
        expiries.granted(SessionID(1), live, until: 200)
        let again = expiries.due(now: 201, warning: 30)
        #expect(again.map(\.secondsLeft) == [0])
        #expect(expiries.count == 1)
    }
}
