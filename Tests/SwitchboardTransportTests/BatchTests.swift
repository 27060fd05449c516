import SwitchboardTestKit
import Dispatch
import Synchronization
import Testing
@testable import SwitchboardTransport

/// Small frames written into shared batches: the same bytes as frames of their own, in order.
@Suite(.timeLimit(.minutes(1))) struct BatchTests {
    @Test func aBatchHoldsTheSameBytesAsItsFramesEncodedOneByOne() {
        let payloads: [[UInt8]] = [[], [1], Array(repeating: 7, count: 125), Array(repeating: 9, count: 126)]
        let batch = OutboundFrame.batch(capacity: 512)
        let writer = batch.batchWriter
        var expected: [UInt8] = []
        for payload in payloads {
            payload.withUnsafeBytes { writer.appendFrame(opcode: .binary, payload: $0, maskKey: nil) }
            expected += OutboundFrame.binary(payload).bytes
        }
        let shared = OutboundFrame.text("shared")
        writer.append(copyOf: shared)
        expected += shared.bytes
        #expect(batch.bytes == expected)
        #expect(writer.room == 512 - expected.count)

        let key: (UInt8, UInt8, UInt8, UInt8) = (0x12, 0x34, 0x56, 0x78)
        let masked = OutboundFrame.batch(capacity: 64)
        [UInt8]([5, 6, 7]).withUnsafeBytes { masked.batchWriter.appendFrame(opcode: .binary, payload: $0, maskKey: key) }
        #expect(masked.bytes == wireFrame(opcode: 2, payload: [5, 6, 7], mask: key))
    }

    @Test func aMostlyEmptyBatchIsTrimmedToItsBytesAndAFullerOneIsKept() {
        let sparse = OutboundFrame.batch(capacity: 960)
        [UInt8]([1, 2, 3]).withUnsafeBytes { sparse.batchWriter.appendFrame(opcode: .binary, payload: $0, maskKey: nil) }
        let trimmed = sparse.trimmed()
        #expect(trimmed.bytes == sparse.bytes)
        #expect(trimmed.capacity == sparse.count)
        let dense = OutboundFrame.batch(capacity: 16)
        [UInt8](repeating: 9, count: 10).withUnsafeBytes { dense.batchWriter.appendFrame(opcode: .binary, payload: $0, maskKey: nil) }
        #expect(dense.trimmed().capacity == 16)
        var queue: [OutboundFrame] = []
        queue.appendTrimmed([sparse, dense, .binary([7])])
        #expect(queue.map(\.capacity) == [sparse.count, 16, OutboundFrame.binary([7]).count])
        #expect(queue.map(\.bytes) == [sparse.bytes, dense.bytes, OutboundFrame.binary([7]).bytes])
    }

    @Test func smallFramesShareBatchesAndArriveWholeInOrder() async throws {
        try await withRawConnection { raw, connection in
            // Every send below stays queued until the gate opens.
            let gate = park(connection.eventLoop)
            let shared = OutboundFrame.binary([0xEE, 0xEE])
            let large = OutboundFrame.binary([UInt8](repeating: 0xAB, count: WebSocketConnection.batchedFrameLimit))
            var expected: [(opcode: UInt8, payload: [UInt8])] = []
            var bytes = 0
            for index in 0..<40 {
                let payload = [UInt8](repeating: UInt8(index), count: index * 3)
                #expect(connection.sendBinary(payload))
                expected.append((2, payload))
                bytes += OutboundFrame.binary(payload).count
                switch index % 4 {
                case 0:
                    #expect(connection.sendCopy(of: shared))
                    expected.append((2, [0xEE, 0xEE]))
                    bytes += shared.count
                case 1:
                    #expect(connection.send(shared))
                    expected.append((2, [0xEE, 0xEE]))
                    bytes += shared.count
                case 2:
                    #expect(connection.sendCopy(of: large))
                    expected.append((2, Array(large.payload)))
                    bytes += large.count
                default:
                    #expect(connection.sendText("t\(index)"))
                    expected.append((1, Array("t\(index)".utf8)))
                    bytes += OutboundFrame.text("t\(index)").count
                }
            }
            #expect(connection.bufferedBytes == bytes)
            // Frames sent on their own (shared or large) split batches; the rest share them.
            let ownFrames = 20
            #expect(connection.queuedBufferCount < expected.count - ownFrames)
            gate.signal()
            await expectArrival(of: expected, at: raw, from: connection)
        }
    }

    @Test func framesJoinedArriveAsTheFramesOneAfterAnother() async throws {
        let frames: [OutboundFrame] = [
            .binary([1, 2, 3]), .text("joined"), .binary([UInt8](repeating: 0xCD, count: 300)), .binary([]),
        ]
        let joined = OutboundFrame.joining(frames)
        #expect(joined.bytes == frames.flatMap(\.bytes))
        #expect(joined.count == frames.reduce(0) { $0 + $1.count })
        #expect(OutboundFrame.joining(frames.prefix(1)).bytes == frames[0].bytes)
        try await withRawConnection { raw, connection in
            // Queued with the frames sent before and after it, as one write vector of its own.
            #expect(connection.sendBinary([9]))
            #expect(connection.send(joined))
            #expect(connection.sendText("after"))
            let expected: [(opcode: UInt8, payload: [UInt8])] = [
                (2, [9]), (2, [1, 2, 3]), (1, Array("joined".utf8)), (2, [UInt8](repeating: 0xCD, count: 300)), (2, []),
                (1, Array("after".utf8)),
            ]
            await expectArrival(of: expected, at: raw, from: connection)
        }
    }

    @Test func aMessageWrittenInPlaceArrivesAsWrittenAndItsWriterAlwaysRuns() async throws {
        /// A payload of `count` bytes counting from `first`.
        func payload(_ count: Int, from first: UInt8) -> [UInt8] { (0..<count).map { first &+ UInt8(truncatingIfNeeded: $0) } }
        try await withRawConnection { raw, connection in
            let gate = park(connection.eventLoop)
            // A small one, written into the batch between frames sent otherwise; a large one, into
            // a frame of its own.
            let sizes = [0, 100, WebSocketConnection.batchedFrameLimit + 1]
            #expect(connection.sendBinary([9]))
            var seen: [[UInt8]] = []
            for (index, size) in sizes.enumerated() {
                let queued = connection.sendBinary(payloadCount: size) { memory in
                    for offset in memory.indices { memory[offset] = UInt8(index) &+ UInt8(truncatingIfNeeded: offset) }
                    seen.append(Array(memory))
                }
                #expect(queued)
            }
            #expect(connection.sendText("after"))
            #expect(seen == sizes.enumerated().map { payload($1, from: UInt8($0)) }, "the writer sees what it wrote")
            gate.signal()
            #expect(raw.readFrame()?.payload == [9])
            for (index, size) in sizes.enumerated() { #expect(raw.readFrame()?.payload == payload(size, from: UInt8(index))) }
            #expect(raw.readFrame()?.payload == Array("after".utf8))
            // Once the connection is closed, nothing is queued, and the writer still runs once.
            connection.close()
            var calls = 0
            #expect(!connection.sendBinary(payloadCount: 10) { _ in calls += 1 })
            #expect(calls == 1)
        }
    }

    @Test func aConnectionBusyInOnePassFillsFewLargerBatches() async throws {
        try await withRawConnection { raw, connection in
            let gate = park(connection.eventLoop)
            // 300 frames of 102 bytes: 34 batches of the first size; 4 when each is four times the last.
            let payloads = (0..<300).map { [UInt8](repeating: UInt8($0 % 256), count: 100) }
            for payload in payloads { #expect(connection.sendBinary(payload)) }
            let first = WebSocketConnection.batchCapacity
            #expect(first + 4 * first + 2 * WebSocketConnection.largestBatchCapacity >= 300 * 102)
            #expect(connection.queuedBufferCount == 4)
            gate.signal()
            for payload in payloads { #expect(raw.readFrame()?.payload == payload) }
            #expect(await eventually { connection.bufferedBytes == 0 })
        }
    }

    @Test func aClientsSmallMessagesAreMaskedInBatchesAndArriveInOrder() async throws {
        let handler = RecordingHandler()
        try await withServer(handler: handler) { _, port, group in
            let client = try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: group, handler: RecordingHandler())
            #expect(await handler.wait { $0.opened.count == 1 })
            let sent = (0..<300).map { [UInt8](repeating: UInt8($0 % 256), count: $0 % 200) }
            for payload in sent { #expect(client.sendBinary(payload)) }
            #expect(await handler.wait { $0.messages.count == sent.count })
            #expect(handler.messages(for: try #require(handler.opened.first).id) == sent.map { .binary($0) })
        }
    }
}

/// A peer that does not read: what waits for it holds memory of about the size it is counted as.
@Suite(.timeLimit(.minutes(1))) struct BatchMemoryTests {
    @Test func smallFramesWaitingForASlowPeerHoldAboutTheirOwnSize() async throws {
        let handler = RecordingHandler()
        try await withServer(.init(maxOutboundBytes: 32 * 1024 * 1024), handler: handler) { _, port, _ in
            let raw = try RawClient(port: port, receiveBufferSize: 4096)
            _ = raw.handshake()
            #expect(await handler.wait { $0.opened.count == 1 })
            let connection = try #require(handler.opened.first)
            let loop = connection.eventLoop
            /// Runs `body` on the loop and waits for it (each call is at least one loop pass).
            func onLoop<T>(_ body: @escaping @Sendable () -> T) -> T {
                let result = Mutex<T?>(nil)
                let done = DispatchSemaphore(value: 0)
                loop.execute {
                    result.withLock { $0 = body() }
                    done.signal()
                }
                done.wait()
                return result.withLock { $0! }
            }
            /// The connection's stream; on the loop only.
            @Sendable func stream() -> TCPStream { connection.engine!.stream as! TCPStream }
            // More than the kernel's buffers take from a peer that does not read (large frames,
            // never batched, until some wait in the stream, and 2.4 MB more), so what follows
            // waits in the stream.
            let large = [UInt8](repeating: 1, count: 60_000)
            for _ in 0..<1_000 where !onLoop({ stream().hasPendingWrites }) { #expect(connection.sendBinary(large)) }
            for _ in 0..<40 { #expect(connection.sendBinary(large)) }
            // One small frame per loop pass: each pass hands the stream a batch holding one.
            let payload = [UInt8](repeating: 0x41, count: 20)
            for _ in 0..<2_000 {
                #expect(connection.sendBinary(payload))
                onLoop { () }
            }
            let (held, bytes) = onLoop {
                let small = stream().unsentFrames.filter { $0.count <= WebSocketConnection.batchedFrameLimit }
                return (small.reduce(0) { $0 + $1.capacity }, small.reduce(0) { $0 + $1.count })
            }
            #expect(bytes == 2_000 * OutboundFrame.binary(payload).count)
            // A batch kept whole would hold 960 bytes for each 22-byte frame.
            #expect(held < 2 * bytes)
        }
    }
}

/// Reads `expected` off `raw`, frame by frame (opcode and payload), then waits until `connection`
/// holds nothing unsent.
private func expectArrival(
    of expected: [(opcode: UInt8, payload: [UInt8])], at raw: RawClient, from connection: WebSocketConnection
) async {
    for frame in expected {
        let received = raw.readFrame()
        #expect(received?.opcode == frame.opcode)
        #expect(received?.payload == frame.payload)
    }
    #expect(await eventually { connection.bufferedBytes == 0 })
}

extension OutboundFrame.BatchWriter {
    /// Encodes one frame of `opcode` carrying a copy of `payload` at the end of the batch.
    fileprivate func appendFrame(opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, maskKey: (UInt8, UInt8, UInt8, UInt8)?) {
        appendFrame(opcode: opcode, payloadCount: payload.count, maskKey: maskKey) {
            if payload.count > 0 { $0.copyMemory(from: payload) }
        }
    }
}
