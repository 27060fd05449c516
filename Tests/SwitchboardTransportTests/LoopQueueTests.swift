import Dispatch
import Synchronization
import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// Frames sent on the connection's own loop thread wait in a queue without a lock, frames from
/// other threads in one under a lock: the peer still gets them in the order they were sent, the
/// outbound bound counts both, and a slow consumer found on the loop is closed as elsewhere.
@Suite(.timeLimit(.minutes(1))) struct LoopQueueTests {
    /// Runs `body` on `loop`'s thread and waits for it.
    private func onLoop(_ loop: EventLoop, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            body()
            done.signal()
        }
        done.wait()
    }

    @Test func framesFromTheLoopAndFromOtherThreadsArriveInTheOrderSent() async throws {
        try await withRawConnection { raw, connection in
            let loop = connection.eventLoop
            var random = SeededGenerator(seed: 20261203)
            var sent: [[UInt8]] = []
            for index in 0..<600 {
                // Sizes on both sides of the batched limit, so batches and frames of their own mix.
                let payload = [UInt8](repeating: UInt8(index % 251), count: Int(random.next() % 400))
                sent.append(payload)
                if random.next() % 2 == 0 {
                    #expect(connection.sendBinary(payload))
                } else {
                    let accepted = Mutex(false)
                    onLoop(loop) { accepted.withLock { $0 = connection.sendBinary(payload) } }
                    #expect(accepted.withLock { $0 })
                }
            }
            for (index, payload) in sent.enumerated() {
                let frame = raw.readFrame()
                #expect(frame?.opcode == 2 && frame?.payload == payload, "frame \(index)")
                if frame?.payload != payload { break }
            }
            #expect(await eventually { connection.bufferedBytes == 0 })
        }
    }

    /// Frames another thread queued while the loop was busy go out ahead of what the loop sends
    /// next, and until then count towards the connection's unsent bytes with the loop's own.
    @Test func theLoopSendsBehindWhatOtherThreadsQueuedAndCountsBoth() async throws {
        try await withRawConnection { raw, connection in
            let loop = connection.eventLoop
            let gate = park(loop)
            let first: [UInt8] = [1, 1, 1]
            let second = [UInt8](repeating: 2, count: 300)
            #expect(connection.sendBinary(first))
            #expect(connection.sendBinary(second))
            let offLoopBytes = connection.bufferedBytes
            #expect(offLoopBytes == OutboundFrame.binary(first).count + OutboundFrame.binary(second).count)
            let third: [UInt8] = [3, 3]
            let seen = Mutex<(bytes: Int, buffers: Int)>((0, 0))
            loop.execute {
                _ = connection.sendBinary(third)
                seen.withLock { $0 = (connection.bufferedBytes, connection.queuedBufferCount) }
            }
            gate.signal()
            #expect(raw.readFrame()?.payload == first)
            #expect(raw.readFrame()?.payload == second)
            #expect(raw.readFrame()?.payload == third)
            let (bytes, buffers) = seen.withLock { $0 }
            #expect(bytes == offLoopBytes + OutboundFrame.binary(third).count)
            // The first batch, the large frame, and the batch the loop wrote the third into.
            #expect(buffers == 3)
            #expect(await eventually { connection.bufferedBytes == 0 })
        }
    }

    /// Sends on the loop's thread past the bound, all before the loop writes anything: the one
    /// past it is refused, the queued ones are dropped unsent, and the peer reads a close 1008.
    @Test func aSlowConsumerFoundOnTheLoopIsClosedWith1008() async throws {
        let handler = RecordingHandler()
        try await withServer(WebSocketServer.Configuration(maxOutboundBytes: 256 * 1024), handler: handler) { _, port, _ in
            let raw = try RawClient(port: port)
            _ = raw.handshake()
            #expect(await handler.wait { $0.opened.count == 1 })
            let connection = try #require(handler.opened.first)
            let payload = [UInt8](repeating: 0xAB, count: 60_000)
            let results = Mutex<[Bool]>([])
            onLoop(connection.eventLoop) {
                let accepted = (0..<6).map { _ in connection.send(.binary(payload)) }
                results.withLock { $0 = accepted }
            }
            #expect(results.withLock { $0 } == [true, true, true, true, false, false])
            #expect(!connection.isOpen)
            let reason = "slow consumer: outbound queue over 262144 bytes"
            #expect(await handler.wait { $0.closed.count == 1 })
            #expect(handler.closed.first?.code == .policyViolation)
            let frame = raw.readFrame()
            #expect(frame?.opcode == 8)
            #expect(frame.map { RawClient.close($0.payload) }?.reason == reason)
            #expect(await eventually { connection.bufferedBytes == 0 })
        }
    }

    /// A close asked for on another thread goes out after the frames the loop queued before it.
    @Test func aCloseFromAnotherThreadFollowsTheLoopsFrames() async throws {
        try await withRawConnection { raw, connection in
            let loop = connection.eventLoop
            let payloads = (0..<5).map { [UInt8](repeating: UInt8($0), count: 10 + $0) }
            let queued = DispatchSemaphore(value: 0)
            let closed = DispatchSemaphore(value: 0)
            // The loop queues its frames and waits, unflushed, while this thread asks for the close.
            loop.execute {
                for payload in payloads { _ = connection.sendBinary(payload) }
                queued.signal()
                closed.wait()
            }
            queued.wait()
            connection.close(code: .goingAway, reason: "bye")
            #expect(!connection.sendBinary([9]))
            closed.signal()
            for payload in payloads { #expect(raw.readFrame()?.payload == payload) }
            let close = raw.readFrame()
            #expect(close?.opcode == 8)
            #expect(close.map { RawClient.close($0.payload) }?.code == 1001)
        }
    }
}
