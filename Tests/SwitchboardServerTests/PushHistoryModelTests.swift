import Testing
import SwitchboardCore
import SwitchboardTestKit
@testable import SwitchboardServer

/// A history of frames and copies, checked step by step against a plain list of what it should keep.
@Suite(.timeLimit(.minutes(5))) struct PushHistoryModelTests {
    struct Model {
        struct Push { let number: UInt64; let bytes: [UInt8]; let size: Int; let channel: ChannelAddress?; let copy: Bool }
        var bounds: PushHistory<[UInt8]>.Bounds
        var sent: UInt64 = 0
        var kept: [Push] = []
        var forgottenNumber: [ChannelAddress: UInt64] = [:]
        var forgottenOrder: [ChannelAddress] = []
        /// The sizes of `kept` added up, kept as it changes (adding them up at every step made
        /// the test quadratic).
        var keptBytes = 0

        mutating func forgetOldest() {
            let oldest = kept.removeFirst()
            keptBytes -= oldest.size
            if let channel = oldest.channel {
                if forgottenNumber[channel] == nil, forgottenOrder.count < 64 { forgottenOrder.append(channel) }
                forgottenNumber[channel] = oldest.number
            }
        }
        mutating func trim() {
            while !kept.isEmpty && (kept.count > bounds.frames || keptBytes > bounds.bytes) { forgetOldest() }
        }
        mutating func record(_ bytes: [UInt8], size: Int, channel: ChannelAddress?, copy: Bool) {
            if !kept.isEmpty && kept.count >= bounds.frames { forgetOldest() }
            sent += 1
            kept.append(Push(number: sent, bytes: bytes, size: size, channel: channel, copy: copy))
            keptBytes += size
            trim()
        }
        func unreceived(after received: UInt64) -> (frames: [[UInt8]], loss: ResumeLoss) {
            let firstKept = sent - UInt64(kept.count)
            let frames = kept.filter { $0.number > received }.map { ($0.copy ? [0xCC] : [0xFF]) + $0.bytes }
            guard received < firstKept else { return (frames, .none) }
            let lost = forgottenOrder.filter { forgottenNumber[$0]! > received }
            return (frames, ResumeLoss(droppedPushes: Int(firstKept - received), channels: lost))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func mixedFramesAndCopiesMatchAModel(seed start: UInt64) async {
        var random = SeededGenerator(seed: start)
        func next(_ bound: Int) -> Int { random.next(below: bound) }
        let channels: [ChannelAddress?] = [nil, ChannelAddress(.message, "a"), ChannelAddress(.user, "b"), ChannelAddress(.message, "c")]
        func randomBounds() -> PushHistory<[UInt8]>.Bounds {
            .init(frames: [0, 1, 2, 3, 5, 16, 128, 1000][next(8)], bytes: [0, 1, 100, 1000, 5000, 64 * 1024, 1 << 20][next(7)])
        }
        let initial = randomBounds()
        var history = PushHistory<[UInt8]>(bounds: initial)
        var model = Model(bounds: initial)
        var failures = 0
        for step in 0..<20_000 {
            await SharedExecutor.yield(atStep: step, every: 1_000)
            let op = next(100)
            if op < 40 {
                let bytes = random.bytes(count: next(300))
                let size = next(4) == 0 ? next(2000) : bytes.count
                let channel = channels[next(channels.count)]
                bytes.withUnsafeBytes { history.recordCopy(of: $0, size: size, channel: channel) }
                model.record(bytes, size: size, channel: channel, copy: true)
            } else if op < 75 {
                let bytes = random.bytes(count: next(50))
                let size = next(2000)
                let channel = channels[next(channels.count)]
                history.record([0xFF] + bytes, size: size, channel: channel)
                model.record(bytes, size: size, channel: channel, copy: false)
            } else if op < 80 && (start <= 4 || next(20) == 0) {
                let bounds = randomBounds()
                history.rebound(bounds)
                model.bounds = bounds
                model.trim()
            } else if op < 88 {
                let expected = model.kept.first?.size ?? 0
                let freed = history.forgetOldestPush()
                if !model.kept.isEmpty { model.forgetOldest() }
                if freed != expected { failures += 1; Issue.record("step \(step): forgetOldestPush \(freed) != \(expected)") }
            } else {
                let received = UInt64(next(Int(model.sent) + 3))
                let got = history.unreceived(after: received) { [0xCC] + Array($0) }
                let want = model.unreceived(after: received)
                if got.frames != want.frames || got.loss != want.loss {
                    failures += 1
                    Issue.record("step \(step): unreceived(after: \(received)) differs: \(got.frames.count) vs \(want.frames.count), \(got.loss) vs \(want.loss)")
                }
            }
            if history.sent != model.sent || history.keptCount != model.kept.count || history.keptBytes != model.keptBytes {
                failures += 1
                Issue.record("step \(step): counts differ: sent \(history.sent)/\(model.sent) kept \(history.keptCount)/\(model.kept.count) bytes \(history.keptBytes)/\(model.keptBytes)")
            }
            if failures > 5 { return }
        }
        // Full replay at the end.
        let got = history.unreceived(after: 0) { [0xCC] + Array($0) }
        let want = model.unreceived(after: 0)
        #expect(got.frames == want.frames)
        #expect(got.loss == want.loss)
    }
}

@Suite(.timeLimit(.minutes(5))) struct ByteRingEdgeTests {
    @Test func exactPowerOfTwoFillsAndWrapAtBoundary() {
        var ring = ByteRing()
        let a = [UInt8](repeating: 1, count: 1024)
        let p0 = a.withUnsafeBytes { ring.append($0) }
        #expect(ring.capacity == 1024)
        ring.removeFirst(1000)
        let b = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        let p1 = b.withUnsafeBytes { ring.append($0) }
        #expect(ring.capacity == 1024)
        #expect(ring.withBytes(at: p1, count: 1000) { Array($0) } == b)
        #expect(ring.withBytes(at: p0 + 1000, count: 24) { Array($0) } == [UInt8](repeating: 1, count: 24))
        // Grow while wrapped.
        let c = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let p2 = c.withUnsafeBytes { ring.append($0) }
        #expect(ring.capacity == 4096)
        #expect(ring.withBytes(at: p1, count: 1000) { Array($0) } == b)
        #expect(ring.withBytes(at: p2, count: 3000) { Array($0) } == c)
        ring.removeFirst(24 + 1000)
        ring.compact()
        #expect(ring.capacity == 4096)  // 3000 needs 4096
        ring.removeFirst(2000)
        ring.compact()
        #expect(ring.capacity == 1024)
        #expect(ring.withBytes(at: p2 + 2000, count: 1000) { Array($0) } == Array(c[2000...]))
        // Empty append on an empty ring.
        var empty = ByteRing()
        let pe = [UInt8]().withUnsafeBytes { empty.append($0) }
        #expect(pe == 0 && empty.capacity == 0)
        #expect(empty.withBytes(at: 0, count: 0) { $0.count } == 0)
    }
}
