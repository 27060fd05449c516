import SwitchboardTestKit
import Foundation
import Synchronization
import Testing
@testable import SwitchboardTransport

/// Outbound bounds and write batching.
@Suite(.timeLimit(.minutes(1))) struct BackpressureTests {
    @Test func slowConsumerIsDroppedOthersUnaffected() async throws {
        let handler = RecordingHandler()
        let configuration = WebSocketServer.Configuration(maxOutboundBytes: 256 * 1024)
        try await withServer(configuration, handler: handler) { _, port, group in
            let raw = try RawClient(port: port, receiveBufferSize: 4096)
            _ = raw.handshake()
            #expect(await handler.wait { $0.opened.count == 1 })
            let slow = try #require(handler.opened.first)
            let healthy = RecordingHandler()
            let client = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/", group: group, handler: healthy)
            #expect(await handler.wait { $0.opened.count == 2 })
            let fast = try #require(handler.opened.dropFirst().first)

            let frame = OutboundFrame.binary([UInt8](repeating: 0xAB, count: 64 * 1024))
            var refused = false
            for _ in 0..<2000 where !refused {
                refused = !slow.send(frame)
                fast.send(.text("tick"))
                if !refused { try await Task.sleep(for: .microseconds(200)) }
            }
            #expect(refused)
            #expect(!slow.isOpen)
            #expect(await handler.wait { $0.closed.contains { $0.id == slow.id } })
            let closed = handler.closed.first { $0.id == slow.id }
            #expect(closed?.code == .policyViolation)
            #expect(closed?.reason == "slow consumer: outbound queue over 262144 bytes")
            fast.sendText("after")
            #expect(await healthy.wait { $0.messages.last?.message == .text("after") })
            #expect(client.isOpen && fast.isOpen)
        }
    }

    @Test func pingFloodWithoutReadingIsDroppedAsSlowConsumer() async throws {
        let handler = RecordingHandler()
        try await withServer(.init(maxOutboundBytes: 64 * 1024), handler: handler) { _, port, _ in
            let raw = try RawClient(port: port, receiveBufferSize: 4096)
            _ = raw.handshake()
            let batch = (0..<1000).flatMap { _ in wireFrame(opcode: 9, payload: [UInt8](repeating: 7, count: 125)) }
            for _ in 0..<200 where handler.closed.isEmpty {
                guard raw.tryWrite(batch) else { break }
            }
            #expect(await handler.wait { $0.closed.count == 1 })
            #expect(handler.closed.first?.code == .policyViolation)
        }
    }

    @Test func aBurstOfSendsWakesTheLoopOnceAndIsWrittenInOneBatch() async throws {
        try await withRawConnection { raw, connection in
            let loop = connection.eventLoop
            // Every send below queues behind one pending wake-up.
            let gate = park(loop)
            let before = loop.wakeupCount
            let frame = OutboundFrame.binary([1, 2, 3])
            for _ in 0..<1000 { #expect(connection.send(frame)) }
            #expect(loop.wakeupCount - before <= 1)
            #expect(connection.bufferedBytes == 1000 * frame.count)
            gate.signal()
            for _ in 0..<1000 {
                guard raw.readFrame()?.payload == [1, 2, 3] else {
                    Issue.record("frame missing")
                    break
                }
            }
            #expect(await eventually { connection.bufferedBytes == 0 })
        }
    }
}
