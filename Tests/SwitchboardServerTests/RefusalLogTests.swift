import Testing
import SwitchboardTesting
import SwitchboardTestKit
@testable import SwitchboardServer

@Suite(.timeLimit(.minutes(5))) struct RefusalLogTests {
    @Test func aFloodOfRefusalsIsLoggedAtABoundedRate() {
        let clock = ManualClock()
        let lines = LogLines()
        let refusals = RefusalLog(log: lines.log, clock: clock, linesPerSecond: 3)
        for port in 0..<10 { refusals.refused("192.0.2.1:\(port)", "too many connections from this address") }
        #expect(lines.matching("refused 192.0.2.1:", "too many connections").count == 3)
        clock.advance(by: .seconds(1))
        refusals.refused("192.0.2.2:1", "handshake timeout")
        #expect(lines.matching("refused 7 more connections").count == 1)
        #expect(lines.matching("refused 192.0.2.2:1: handshake timeout").count == 1)
    }
}
