import Testing
@testable import SwitchboardTransport

/// A peer over its frame budget: the frames within the budget reach the handler and are
/// answered, then the connection closes with 1008.
@Suite(.timeLimit(.minutes(1))) struct FrameRateCloseTests {
    @Test(arguments: [false, true])
    func framesWithinTheBudgetAreAnsweredBeforeTheClose(answeredFromAnotherThread: Bool) async throws {
        let refusals = RefusalRecorder()
        var configuration = WebSocketServer.Configuration()
        configuration.maxFramesPerSecond = 200
        configuration.onRefusal = refusals.record
        let handler = RecordingHandler(echo: true, fromAnotherThread: answeredFromAnotherThread)
        try await withServer(configuration, handler: handler) { _, port, _ in
            let raw = try RawClient(port: port)
            _ = raw.handshake()
            let index = { (i: Int) in [UInt8(i >> 8), UInt8(i & 0xFF)] }
            raw.write((0..<1000).flatMap { wireFrame(opcode: 2, payload: index($0)) })

            var answers: [[UInt8]] = []
            var close: (code: UInt16, reason: String)?
            while let frame = raw.readFrame() {
                if frame.opcode == 8 {
                    close = RawClient.close(frame.payload)
                    break
                }
                answers.append(frame.payload)
            }
            // The bucket holds 200; a read that arrives a few milliseconds later refills a few.
            #expect((200...210).contains(answers.count), "\(answers.count) answers")
            #expect(answers == (0..<answers.count).map(index))
            #expect(handler.messages(for: handler.opened.first?.id ?? 0).count == answers.count)
            #expect(close?.code == 1008)
            #expect(close?.reason == "too many frames")
            #expect(refusals.all == ["\(raw.localAddress): too many frames"])
        }
    }
}
