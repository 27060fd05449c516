import Testing
import SwitchboardCore
@testable import SwitchboardServer

@Suite struct ResumeBufferTests {
    @Test func keepsInOrderUpToEitherBoundThenCountsLoss() {
        var buffer = ResumeBuffer<Int>(maxFrames: 3, maxBytes: 100)
        let room = ChannelKey(.message, "room"), dm = ChannelKey(.user, "bob")
        buffer.append(1, size: 10, channel: room)
        buffer.append(2, size: 80, channel: room)
        buffer.append(3, size: 20, channel: dm)  // over the byte bound
        buffer.append(4, size: 5, channel: dm)
        buffer.append(5, size: 5, channel: room)  // over the count bound
        buffer.append(6, size: 5, channel: room)
        let (frames, loss) = buffer.drain()
        #expect(frames == [1, 2, 4])
        #expect(loss == ResumeLoss(droppedPushes: 3, channels: [dm, room]))
    }
}

@Suite struct CallRateLimiterTests {
    @Test func budgetsAreSeparateAndRefillEachSecond() throws {
        var limits = Limits()
        limits.publishesPerSecondPerClient = 2
        limits.otherCallsPerSecondPerClient = 1
        var limiter = CallRateLimiter(limits: limits)
        try limiter.take(.publish, now: .zero, operation: "publish")
        try limiter.take(.publish, now: .milliseconds(10), operation: "publish")
        try limiter.take(.other, now: .milliseconds(20), operation: "subscribe")
        #expect(throws: RtmError(.operationRateExceedLimitation, operation: "publish", reason: "more than 2 messages per second")) {
            var copy = limiter
            try copy.take(.publish, now: .milliseconds(30), operation: "publish")
        }
        #expect(throws: RtmError.self) {
            var copy = limiter
            try copy.take(.other, now: .milliseconds(999), operation: "subscribe")
        }
        try limiter.take(.publish, now: .seconds(1), operation: "publish")
        try limiter.take(.other, now: .seconds(1), operation: "subscribe")
        var unlimited = CallRateLimiter(limits: .withoutRateLimits)
        for _ in 0..<10_000 { try unlimited.take(.publish, now: .zero, operation: "publish") }
    }
}
