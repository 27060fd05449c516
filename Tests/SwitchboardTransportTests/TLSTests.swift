import Foundation
import Testing
import SwitchboardCrypto
import SwitchboardTestKit
@testable import SwitchboardTransport

/// WebSocket over TLS (`wss://`) end to end on 127.0.0.1, with a throwaway CA.
@Suite(.timeLimit(.minutes(1))) struct TLSTests {
    /// Runs `body` against an echoing TLS server presenting `certificate` (the localhost one by
    /// default), with a client context trusting only the test CA.
    func withTLSServer(
        otherHost: Bool = false, handler: RecordingHandler = RecordingHandler(echo: true),
        _ body: (_ certificates: TestCertificates, _ port: Int, _ group: EventLoopGroup, _ trusting: TLSContext) async throws -> Void
    ) async throws {
        try await TestCertificates.with { certificates in
            let context = try TLSContext.server(
                certificateFile: otherHost ? certificates.otherHostCertificateFile : certificates.certificateFile,
                privateKeyFile: otherHost ? certificates.otherHostKeyFile : certificates.keyFile)
            let trusting = try TLSContext.client(caFile: certificates.caFile, trustSystemRoots: false)
            try await withServer(.init(subprotocol: "switchboard.v1", tls: context), handler: handler) { _, port, group in
                try await body(certificates, port, group, trusting)
            }
        }
    }

    @Test func echoesTextAndBinaryOverTLS() async throws {
        try await withTLSServer { _, port, group, trusting in
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: "wss://127.0.0.1:\(port)/echo", subprotocols: ["switchboard.v1"], tls: trusting,
                group: group, handler: client)
            #expect(connection.subprotocol == "switchboard.v1")
            await expectEchoRoundTrip(over: connection, seenBy: client)
        }
    }

    @Test func serverClosesAndOutboundAccountingDrains() async throws {
        let handler = RecordingHandler()
        try await withTLSServer(handler: handler) { _, port, group, trusting in
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: "wss://127.0.0.1:\(port)/", subprotocols: ["switchboard.v1"], tls: trusting,
                group: group, handler: client)
            #expect(await handler.wait { $0.opened.count == 1 })
            let serverSide = try #require(handler.opened.first)
            let payload = [UInt8](repeating: 0xAB, count: 60_000)
            for _ in 0..<20 { serverSide.sendBinary(payload) }
            #expect(await client.wait { $0.messages.count == 20 })
            #expect(client.messages(for: connection.id).allSatisfy { $0 == .binary(payload) })
            // Write progress is counted in plaintext bytes, so the outbound bound drains to zero.
            #expect(await eventually { serverSide.bufferedBytes == 0 && connection.bufferedBytes == 0 })
            serverSide.close(code: .goingAway, reason: "bye")
            #expect(await client.wait { $0.closed.count == 1 })
            #expect(client.closed.first?.code == .goingAway)
        }
    }

    @Test func untrustedCertificateAndWrongHostFailTheConnect() async throws {
        try await withTLSServer { _, port, group, _ in
            let untrusting = try TLSContext.client(trustSystemRoots: true)
            await #expect(throws: WebSocketClientError.tlsFailed(TLSError(.certificate, "unable to get local issuer certificate"))) {
                _ = try await WebSocketClient.connect(
                    to: "wss://127.0.0.1:\(port)/", tls: untrusting, group: group, handler: RecordingHandler())
            }
        }
        try await withTLSServer(otherHost: true) { _, port, group, trusting in
            await #expect(throws: WebSocketClientError.tlsFailed(TLSError(.certificate, "IP address mismatch"))) {
                _ = try await WebSocketClient.connect(
                    to: "wss://127.0.0.1:\(port)/", tls: trusting, group: group, handler: RecordingHandler())
            }
        }
    }

    @Test func plainClientOnTLSServerIsRefused() async throws {
        try await withTLSServer { _, port, group, _ in
            await #expect(throws: WebSocketClientError.self) {
                _ = try await WebSocketClient.connect(
                    to: "ws://127.0.0.1:\(port)/", timeout: .seconds(3), group: group, handler: RecordingHandler())
            }
        }
    }

    @Test func tls11ClientIsRefusedAndTls12Accepted() async throws {
        try await withTLSServer { certificates, port, _, _ in
            let old = try await runSClient(port: port, caFile: certificates.caFile, version: "-tls1_1")
            #expect(old.contains("alert protocol version") || old.contains("unsupported protocol"), "\(old)")
            #expect(old.contains("no peer certificate available"), "\(old)")
            let current = try await runSClient(port: port, caFile: certificates.caFile, version: "-tls1_2")
            #expect(current.contains("Protocol  : TLSv1.2"), "\(current)")
            #expect(current.contains("Verify return code: 0 (ok)"), "\(current)")
        }
    }

    /// Runs `openssl s_client` against 127.0.0.1:`port` with one protocol version allowed
    /// (security level 0 so that the client itself is willing to offer TLS 1.1).
    func runSClient(port: Int, caFile: String, version: String) async throws -> String {
        try await BlockingWork.run {
            try BlockingWork.runProcess(
                "/usr/bin/env",
                [
                    "openssl", "s_client", "-connect", "127.0.0.1:\(port)", version, "-cipher", "DEFAULT@SECLEVEL=0",
                    "-CAfile", caFile, "-verify_ip", "127.0.0.1",
                ]
            ).output
        }
    }
}
