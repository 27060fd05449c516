import Testing
import SwitchboardCore
import SwitchboardWire
@testable import SwitchboardBench

@Suite(.timeLimit(.minutes(2))) struct PayloadStampTests {
    @Test func stampRoundTripsAndPadsToSize() {
        let body = PayloadStamp.make(size: 100, timestamp: 0x0102_0304_0506_0708)
        #expect(body.count == 100)
        #expect(Array(body.prefix(8)) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(PayloadStamp.timestamp(in: body) == 0x0102_0304_0506_0708)
    }

    @Test func smallestPayloadIsTheTimestamp() {
        #expect(PayloadStamp.make(size: 3, timestamp: 42).count == 8)
        #expect(PayloadStamp.timestamp(in: [1, 2, 3]) == nil)
        #expect(PayloadStamp.timestamp(in: PayloadStamp.make(size: 8, timestamp: 42), at: 1) == nil)
    }

    @Test func monotonicClockAdvances() {
        let first = MonotonicClock.now()
        let second = MonotonicClock.now()
        #expect(first > 0)
        #expect(second >= first)
    }

    @Test func scanFindsTheTimestampOfAPushedMessage() {
        for size in [8, 100, 300, 70_000] {
            let body = PayloadStamp.make(size: size, timestamp: 987_654_321)
            let push = Push.message(
                MessageDelivery(
                    channelType: .message, channelName: "lobby", payload: .binary(body), publisher: "alice",
                    customType: "", timestamp: 1))
            #expect(ServerFrameScan(Wire.encodePush(push)) == .message(timestamp: 987_654_321), "size \(size)")
        }
    }

    @Test func scanReadsAnswers() {
        #expect(ServerFrameScan(ServerFrame.ok(id: 0x8000_0001).encode()) == .ok(id: 0x8000_0001))
        let error = RtmError(.operationRateExceedLimitation, operation: "publish", reason: "too many")
        #expect(ServerFrameScan(ServerFrame.error(id: 7, error).encode()) == .error(id: 7))
    }

    @Test func scanIgnoresOtherFrames() {
        let text = Push.message(
            MessageDelivery(
                channelType: .message, channelName: "lobby", payload: .string("a text body here"),
                publisher: "alice", customType: "", timestamp: 1))
        #expect(ServerFrameScan(Wire.encodePush(text)) == .other)
        #expect(ServerFrameScan(ServerFrame.closing(reason: .sameUidLogin, detail: "x").encode()) == .other)
        #expect(ServerFrameScan([0xc1, 0x00]) == .other)
        #expect(ServerFrameScan([]) == .other)
    }

    @Test func procStatParsing() {
        let stat = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 1 2 3"
        #expect(ProcessSample.cpuSeconds(fromStat: stat, ticksPerSecond: 100) == 3.0)
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t    2048 kB\nThreads:\t3\n"
        #expect(ProcessSample.residentBytes(fromStatus: status) == 2_097_152)
        #expect(ProcessSample.read(pid: "self")?.cpuSeconds ?? -1 >= 0)
    }
}
