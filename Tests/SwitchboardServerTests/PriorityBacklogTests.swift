import Testing
import SwitchboardCore
@testable import SwitchboardServer

@Suite(.timeLimit(.minutes(5))) struct PriorityBacklogTests {
    typealias Backlog = PriorityBacklog<String>

    func item(_ name: String) -> Backlog.Item { Backlog.Item(frame: name, size: 10, wireBytes: name.utf8.count, channel: nil) }

    @Test func theHighestLaneGoesFirstAndEachLaneKeepsItsOrder() {
        var backlog = Backlog()
        backlog.append(item("low1"), lane: Backlog.lane(for: .low))
        backlog.append(item("n1"), lane: Backlog.normalLane)
        backlog.append(item("low2"), lane: Backlog.lane(for: .low))
        backlog.append(item("top1"), lane: Backlog.lane(for: .highest))
        backlog.append(item("n2"), lane: Backlog.normalLane)
        backlog.append(item("hi1"), lane: Backlog.lane(for: .high))
        backlog.append(item("top2"), lane: Backlog.lane(for: .highest))
        #expect(backlog.count == 7)
        #expect(backlog.wireBytes == 23)
        var order: [String] = []
        while let next = backlog.popFirst() { order.append(next.frame) }
        #expect(order == ["top1", "top2", "hi1", "n1", "n2", "low1", "low2"])
        #expect(backlog.isEmpty)
        #expect(backlog.wireBytes == 0)
    }

    @Test func longRunsStayInOrderAcrossCompaction() {
        var backlog = Backlog()
        var expected: [String] = []
        for round in 0..<5 {
            for index in 0..<300 { backlog.append(item("\(round)-\(index)"), lane: Backlog.normalLane) }
            for _ in 0..<200 { if let next = backlog.popFirst() { expected.append(next.frame) } }
        }
        while let next = backlog.popFirst() { expected.append(next.frame) }
        #expect(expected == (0..<5).flatMap { round in (0..<300).map { "\(round)-\($0)" } })
    }

    @Test func anEmptiedBacklogHoldsAgainLikeANewOne() {
        var backlog = Backlog()
        #expect(backlog.popFirst() == nil)
        #expect(backlog.isEmpty && backlog.wireBytes == 0)
        for round in 0..<3 {
            backlog.append(item("n\(round)"), lane: Backlog.normalLane)
            backlog.append(item("t\(round)"), lane: Backlog.lane(for: .highest))
            #expect(backlog.popFirst()?.frame == "t\(round)")
            #expect(backlog.popFirst()?.frame == "n\(round)")
            #expect(backlog.popFirst() == nil)
            #expect(backlog.isEmpty && backlog.count == 0 && backlog.wireBytes == 0)
        }
    }
}
