import Testing
import SwitchboardCore
import SwitchboardTestKit
@testable import SwitchboardServer

@Suite(.timeLimit(.minutes(5))) struct PushHistoryTests {
    let room = ChannelAddress(.message, "room"), dm = ChannelAddress(.user, "bob")

    @Test func aClientGetsAgainEverythingAfterWhatItReceived() {
        var history = PushHistory<Int>(bounds: .init(frames: 10, bytes: 1_000))
        for push in 1...6 { history.record(push, size: 10, channel: room) }
        #expect(history.sent == 6)
        #expect(history.unreceived(after: 6).frames.isEmpty)
        #expect(history.unreceived(after: 4).frames == [5, 6])
        #expect(history.unreceived(after: 0).frames == [1, 2, 3, 4, 5, 6])
        #expect(history.unreceived(after: 4).loss == .none)
        // A count past what was sent (another server, say) resends nothing.
        #expect(history.unreceived(after: 99).frames.isEmpty)
    }

    @Test func pastTheBoundsTheOldestAreForgottenAndReportedWithTheirChannels() {
        var history = PushHistory<Int>(bounds: .init(frames: 3, bytes: 100))
        history.record(1, size: 10, channel: room)
        history.record(2, size: 10, channel: dm)
        history.record(3, size: 80, channel: room)
        history.record(4, size: 20, channel: room)  // over 100 bytes: 1 and 2 are forgotten
        let (frames, loss) = history.unreceived(after: 0)
        #expect(frames == [3, 4])
        #expect(loss == ResumeLoss(droppedPushes: 2, channels: [room, dm]))
        // A client that had received the first push lost only the second.
        #expect(history.unreceived(after: 1).loss == ResumeLoss(droppedPushes: 1, channels: [dm]))
        #expect(history.unreceived(after: 2).loss == .none)
    }

    @Test func smallerBoundsForgetAtOnceAndTheReportNamesAtMostSixtyFourChannels() {
        var history = PushHistory<Int>(bounds: .init(frames: 2_000, bytes: 1_000_000))
        for index in 0..<1_000 { history.record(index, size: 1, channel: ChannelAddress(.user, "user\(index)")) }
        history.rebound(.init(frames: 10, bytes: 1_000_000))
        #expect(history.keptCount == 10)
        let (frames, loss) = history.unreceived(after: 0)
        #expect(frames == Array(990..<1_000))
        #expect(loss.droppedPushes == 990)
        #expect(loss.channels.count == 64)
    }
}

@Suite(.timeLimit(.minutes(5))) struct CallRateLimiterTests {
    @Test func budgetsAreSeparateAndRefillEachSecond() throws {
        var limits = Limits()
        limits.messages.publishesPerSecondPerClient = 2
        limits.sessions.otherCallsPerSecondPerClient = 1
        var limiter = CallRateLimiter(limits: limits)
        try limiter.take(.publish, app: "a", now: .zero, operation: "publish")
        try limiter.take(.publish, app: "a", now: .milliseconds(10), operation: "publish")
        try limiter.take(.other, app: "a", now: .milliseconds(20), operation: "subscribe")
        #expect(throws: RtmError(.operationRateExceedLimitation, operation: "publish", reason: "more than 2 messages per second")) {
            var copy = limiter
            try copy.take(.publish, app: "a", now: .milliseconds(30), operation: "publish")
        }
        #expect(throws: RtmError.self) {
            var copy = limiter
            try copy.take(.other, app: "a", now: .milliseconds(999), operation: "subscribe")
        }
        try limiter.take(.publish, app: "a", now: .seconds(1), operation: "publish")
        try limiter.take(.other, app: "a", now: .milliseconds(1_020), operation: "subscribe")
        // The window slides: two calls at 0.9 s and 1.0 s, then none before 1.9 s.
        var sliding = CallRateLimiter(limits: limits)
        try sliding.take(.publish, app: "a", now: .milliseconds(900), operation: "publish")
        try sliding.take(.publish, app: "a", now: .milliseconds(1_000), operation: "publish")
        #expect(throws: RtmError.self) {
            var copy = sliding
            try copy.take(.publish, app: "a", now: .milliseconds(1_899), operation: "publish")
        }
        try sliding.take(.publish, app: "a", now: .milliseconds(1_900), operation: "publish")
        var unlimited = CallRateLimiter(limits: .withoutRateLimits)
        for _ in 0..<10_000 { try unlimited.take(.publish, app: "a", now: .zero, operation: "publish") }
    }
}

@Suite(.timeLimit(.minutes(5))) struct DetachedBudgetTests {
    @Test func theSessionDetachedLongestAgoComesFirstAndLeaversStopCounting() {
        var budget = DetachedBudget(limit: 100)
        budget.detached(SessionID(1), holding: 60)
        budget.detached(SessionID(2), holding: 30)
        #expect(!budget.isOver)
        budget.changed(by: 20)
        #expect(budget.isOver)
        #expect(budget.oldest() == SessionID(1))
        budget.left(SessionID(1), holding: 60)
        #expect(budget.bytes == 50)
        #expect(budget.oldest() == SessionID(2))
        // Detached again later, a session goes to the back of the queue.
        budget.detached(SessionID(1), holding: 10)
        #expect(budget.oldest() == SessionID(2))
        budget.left(SessionID(2), holding: 50)
        #expect(budget.oldest() == SessionID(1))
        #expect(budget.bytes == 10)
    }

    @Test func forgettingTheOldestPushFreesItsBytesAndReportsItLost() {
        var history = PushHistory<Int>(bounds: .init(frames: 10, bytes: 1_000))
        for push in 1...3 { history.record(push, size: 10 * push, channel: ChannelAddress(.message, "room")) }
        #expect(history.forgetOldestPush() == 10)
        #expect(history.keptBytes == 50)
        #expect(history.unreceived(after: 0).loss.droppedPushes == 1)
        #expect(history.forgetOldestPush() == 20)
        #expect(history.forgetOldestPush() == 30)
        #expect(history.forgetOldestPush() == 0)
    }
}

@Suite(.timeLimit(.minutes(5))) struct ResolvedReceiversTests {
    @Test func aListIsResolvedOnceUntilItChangesOrIsCleared() {
        var resolved = ResolvedReceivers<Int>()
        var resolutions = 0
        func resolve(_ list: [SessionID]) -> [Int] {
            resolutions += 1
            return list.map { Int($0.rawValue) * 10 }
        }
        var list = [SessionID(1), SessionID(2)]
        #expect(resolved.targets(of: list, resolve: resolve) == [10, 20])
        #expect(resolved.targets(of: list, resolve: resolve) == [10, 20])
        #expect(resolutions == 1)
        // A changed list has storage of its own (the kept one is shared), so it is resolved anew.
        list.append(SessionID(3))
        #expect(resolved.targets(of: list, resolve: resolve) == [10, 20, 30])
        #expect(resolutions == 2)
        resolved.clear()
        #expect(resolved.targets(of: list, resolve: resolve) == [10, 20, 30])
        #expect(resolutions == 3)
        // One receiver is looked up directly every time.
        _ = resolved.targets(of: [SessionID(4)], resolve: resolve)
        _ = resolved.targets(of: [SessionID(4)], resolve: resolve)
        #expect(resolutions == 5)
    }
}

@Suite(.timeLimit(.minutes(5))) struct PushHistoryMemoryTests {
    final class Frame: Sendable {}

    @Test func forgottenPushesAreFreedAndAShrunkBoundGivesTheRingBack() {
        var history = PushHistory<Frame>(bounds: .init(frames: 1_000, bytes: 1_000_000))
        var early: [Frame] = []
        for _ in 0..<1_000 {
            let frame = Frame()
            early.append(frame)
            history.record(frame, size: 16, channel: nil)
        }
        let watched = early.map { WeakFrame($0) }
        early.removeAll()
        history.rebound(.init(frames: 128, bytes: 64 * 1024))
        #expect(history.keptCount == 128)
        // Only the 128 kept frames are alive: the forgotten ones are not held by the ring.
        #expect(watched.filter { $0.frame != nil }.count == 128)
        for _ in 0..<2_000 { history.record(Frame(), size: 32 * 1024, channel: nil) }
        #expect(history.keptCount == 2)
        #expect(watched.allSatisfy { $0.frame == nil })
        #expect(history.unreceived(after: history.sent - 2) { _ in Frame() }.frames.count == 2)
    }

    @Test func pushesPastTheFrameBoundAreFreedABatchAtATime() {
        let bound = 128
        let batch = PushHistory<Frame>.forgetBatch
        var history = PushHistory<Frame>(bounds: .init(frames: bound, bytes: 1_000_000))
        var watched: [WeakFrame] = []
        for _ in 0..<1_000 {
            let frame = Frame()
            watched.append(WeakFrame(frame))
            history.record(frame, size: 16, channel: nil)
            let alive = watched.filter { $0.frame != nil }.count
            #expect(history.keptCount == min(watched.count, bound))
            // The kept ones, and fewer than a batch forgotten and not yet let go.
            #expect(alive >= min(watched.count, bound) && alive < bound + batch)
            // The oldest alive is never older than the batch before the kept ones.
            let firstAlive = watched.firstIndex { $0.frame != nil } ?? watched.count
            #expect(firstAlive >= watched.count - bound - (batch - 1))
        }
        // Only the kept ones are replayed, and the others are reported lost.
        let replay = history.unreceived(after: 0) { _ in Frame() }
        #expect(replay.frames.count == bound)
        #expect(replay.loss.droppedPushes == 1_000 - bound)
    }

    struct WeakFrame {
        weak var frame: Frame?
        init(_ frame: Frame) { self.frame = frame }
    }
}

@Suite(.timeLimit(.minutes(5))) struct DetachedBudgetQueueTests {
    @Test func sessionsThatComeAndGoLeaveNothingBehind() {
        var budget = DetachedBudget(limit: 1_000_000)
        for id in 1...100_000 {
            budget.detached(SessionID(UInt64(id)), holding: 10)
            budget.left(SessionID(UInt64(id)), holding: 10)
        }
        #expect(budget.queueLength == 0)
        #expect(budget.bytes == 0)
        // A session that stays detached keeps its place; those after it that leave are dropped
        // as soon as they reach the front.
        budget.detached(SessionID(1_000_001), holding: 5)
        for id in 1...1_000 {
            budget.detached(SessionID(UInt64(id)), holding: 1)
            budget.left(SessionID(UInt64(id)), holding: 1)
        }
        budget.left(SessionID(1_000_001), holding: 5)
        #expect(budget.queueLength == 0)
    }
}

extension PushHistory where Frame == Int {
    /// A resume's replay, with a push kept as a copy read back as its first byte.
    func unreceived(after received: UInt64) -> (frames: [Int], loss: ResumeLoss) {
        unreceived(after: received) { Int($0.first ?? 0) }
    }

    /// Records a copy of one push whose bytes are `byte` repeated `count` times.
    mutating func recordCopy(_ byte: UInt8, count: Int = 1, size: Int, channel: ChannelAddress?) {
        [UInt8](repeating: byte, count: count).withUnsafeBytes { recordCopy(of: $0, size: size, channel: channel) }
    }
}

@Suite(.timeLimit(.minutes(5))) struct PushHistoryCopyTests {
    let room = ChannelAddress(.message, "room"), dm = ChannelAddress(.user, "bob")

    @Test func copiesAndFramesComeBackTogetherInPushOrder() {
        var history = PushHistory<Int>(bounds: .init(frames: 10, bytes: 1_000))
        history.record(1, size: 10, channel: room)
        history.recordCopy(2, size: 10, channel: dm)
        history.recordCopy(3, count: 200, size: 10, channel: dm)
        history.record(4, size: 10, channel: room)
        history.recordCopy(5, size: 10, channel: dm)
        #expect(history.sent == 5)
        #expect(history.unreceived(after: 0).frames == [1, 2, 3, 4, 5])
        #expect(history.unreceived(after: 2).frames == [3, 4, 5])
        // A copy comes back with exactly its bytes.
        var replayed: [[UInt8]] = []
        _ = history.unreceived(after: 2) { copy -> Int in
            replayed.append(Array(copy))
            return 0
        }
        #expect(replayed == [[UInt8](repeating: 3, count: 200), [5]])
    }

    @Test func forgottenCopiesAreReportedLostAndTheirRoomIsUsedAgain() {
        var history = PushHistory<Int>(bounds: .init(frames: 3, bytes: 1_000))
        // Many more copies than the frame bound, each 300 bytes: the ring wraps many times over.
        for push in 1...1_000 { history.recordCopy(UInt8(push % 251), count: 300, size: 300, channel: push.isMultiple(of: 2) ? dm : room) }
        let (frames, loss) = history.unreceived(after: 0)
        #expect(frames == [998, 999, 1_000].map { $0 % 251 })
        #expect(loss == ResumeLoss(droppedPushes: 997, channels: [room, dm]))
        #expect(history.keptBytes == 900)
        // A thousand copies went through a ring that never held more than the bound needs.
        #expect(history.copiesCapacity == 1_024)
        // Forgetting the oldest by the budget frees a copy as well.
        #expect(history.forgetOldestPush() == 300)
        #expect(history.unreceived(after: 0).frames == [999, 1_000].map { $0 % 251 })
    }

    @Test func whatTheBudgetForgetsIsGivenBack() {
        // A detached session's history: many copies kept, then forgotten one by one by the
        // server-wide budget; the ring's memory goes with them, not only their count.
        var history = PushHistory<Int>(bounds: .init(frames: 1_000, bytes: 1_000_000))
        for push in 1...200 { history.recordCopy(UInt8(push % 256), count: 252, size: 252, channel: dm) }
        #expect(history.copiesCapacity == 65_536)
        while history.keptCount > 10 { _ = history.forgetOldestPush() }
        #expect(history.copiesCapacity <= 4_096)
        #expect(history.unreceived(after: 0).frames == (191...200).map { $0 % 256 })
        while history.forgetOldestPush() > 0 {}
        #expect(history.keptBytes == 0)
        #expect(history.copiesCapacity == 0)
    }

    @Test func aShrunkBoundKeepsTheNewestCopiesIntact() {
        var history = PushHistory<Int>(bounds: .init(frames: 1_000, bytes: 1_000_000))
        for push in 1...500 { history.recordCopy(UInt8(push % 256), count: push, size: push, channel: dm) }
        history.rebound(.init(frames: 4, bytes: 1_000_000))
        var replayed: [[UInt8]] = []
        _ = history.unreceived(after: 0) { copy -> Int in
            replayed.append(Array(copy))
            return 0
        }
        #expect(replayed == (497...500).map { [UInt8](repeating: UInt8($0 % 256), count: $0) })
    }
}

@Suite(.timeLimit(.minutes(5))) struct ByteRingTests {
    @Test func bytesComeBackExactlyAcrossWrapsGrowthAndCompaction() async {
        // Checked against a plain list of what is kept, over random appends and removals.
        var ring = ByteRing()
        var model: [(position: UInt64, bytes: [UInt8])] = []
        var modelCount = 0
        var random = SeededGenerator(seed: 0x5eed)
        func next(_ bound: Int) -> Int { random.next(below: bound) }
        for step in 0..<5_000 {
            await SharedExecutor.yield(atStep: step, every: 500)
            if next(3) > 0 || model.isEmpty {
                let bytes = random.bytes(count: next(700))
                let position = bytes.withUnsafeBytes { ring.append($0) }
                #expect(position == (model.last.map { $0.position + UInt64($0.bytes.count) } ?? ring.start))
                model.append((position, bytes))
                modelCount += bytes.count
            } else {
                let oldest = model.removeFirst()
                ring.removeFirst(oldest.bytes.count)
                modelCount -= oldest.bytes.count
            }
            if step.isMultiple(of: 97) { ring.compact() }
            let wrong = (model.suffix(3) + model.prefix(2)).filter {
                ring.withBytes(at: $0.position, count: $0.bytes.count) { Array($0) } != $0.bytes
            }
            guard ring.count == modelCount, ring.capacity >= ring.count, wrong.isEmpty else {
                Issue.record("step \(step): count \(ring.count) (kept \(modelCount)), capacity \(ring.capacity), \(wrong.count) pushes differ")
                return
            }
        }
        while let oldest = model.first {
            model.removeFirst()
            ring.removeFirst(oldest.bytes.count)
        }
        ring.compact()
        #expect(ring.capacity == 0)
    }
}
