import SwitchboardCrypto
import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// A peer that stops reading: once its outbound queue is over the bound it gets every frame
/// already started, then a close frame 1008 saying why, on a stream that stays valid.
@Suite(.timeLimit(.minutes(1))) struct SlowConsumerCloseTests {
    @Test func aPeerThatStopsReadingFinallyReadsValidFramesThenClose1008() async throws {
        try await expectSlowConsumerClose(tls: nil)
    }

    /// Over TLS too: frames not yet encrypted are the ones dropped, so the records already sent
    /// stay whole and the close frame follows them in a record of its own.
    @Test func overTLSTheCloseFollowsTheRecordsAlreadyWritten() async throws {
        try await TestCertificates.with { certificates in
            let server = try TLSContext.server(
                certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
            let client = try TLSContext.client(caFile: certificates.caFile, trustSystemRoots: false)
            try await expectSlowConsumerClose(tls: (server, client))
        }
    }

    func expectSlowConsumerClose(tls: (server: TLSContext, client: TLSContext)?) async throws {
        let refusals = RefusalRecorder()
        var configuration = WebSocketServer.Configuration(maxOutboundBytes: 256 * 1024, tls: tls?.server)
        configuration.onRefusal = refusals.record
        let handler = RecordingHandler()
        try await withServer(configuration, handler: handler) { _, port, _ in
            let raw = try RawClient(port: port, receiveBufferSize: 4096)
            if let tls { try raw.startTLS(tls.client, host: "localhost") }
            _ = raw.handshake()
            #expect(await handler.wait { $0.opened.count == 1 })
            let connection = try #require(handler.opened.first)

            // 60,000 bytes do not divide the socket buffers, so the kernel fills up mid-frame.
            let payload = [UInt8](repeating: 0xAB, count: 60_000)
            // The first frame is on the wire (partly, at least) before the rest come: a frame once
            // started is finished before the close, so at least one arrives whole however late the
            // loop got to write (a starved loop could otherwise queue past the bound first).
            #expect(connection.send(.binary(payload)))
            #expect(await eventually { connection.bufferedBytes < payload.count })
            var accepted = 1
            for _ in 0..<2000 {
                guard connection.send(.binary(payload)) else { break }
                accepted += 1
                try await Task.sleep(for: .microseconds(200))
            }
            #expect(!connection.isOpen)
            let reason = "slow consumer: outbound queue over 262144 bytes"
            #expect(await handler.wait { $0.closed.count == 1 })
            #expect(handler.closed.first?.code == .policyViolation)
            #expect(handler.closed.first?.reason == reason)
            #expect(refusals.all == ["\(raw.localAddress): \(reason)"])

            // Now it reads: whole frames, then the close frame, nothing cut short.
            var complete = 0
            var close: (code: UInt16, reason: String)?
            while let frame = raw.readFrame() {
                if frame.opcode == 8 {
                    close = RawClient.close(frame.payload)
                    break
                }
                #expect(frame.opcode == 2 && frame.fin && frame.payload == payload)
                complete += 1
            }
            #expect(close?.code == 1008)
            #expect(close?.reason == reason)
            // Frames never started on the wire were dropped rather than sent ahead of the close;
            // usually some were, but a loop that got to write (over TLS: to encrypt) every frame
            // before it saw the bound passed leaves none to drop (seen beside two busy loops).
            #expect(complete > 0 && complete <= accepted, "\(complete) of \(accepted) frames arrived")
        }
    }
}
