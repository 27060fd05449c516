import Foundation
import Testing
import SwitchboardCrypto
import SwitchboardTestKit

/// The TLS engine over memory buffers: two sessions talk by handing each other ciphertext.
@Suite(.timeLimit(.minutes(1))) struct TLSSessionTests {
    /// Moves ciphertext both ways until neither side has anything to send; returns whether both
    /// handshakes completed, or the first error.
    static func pump(_ client: TLSSession, _ server: TLSSession) throws(TLSError) -> Bool {
        for _ in 0..<10 {
            let clientDone = try client.handshake()
            let toServer = client.takeCiphertext()
            toServer.withUnsafeBytes { server.feed($0) }
            let serverDone = try server.handshake()
            let toClient = server.takeCiphertext()
            toClient.withUnsafeBytes { client.feed($0) }
            if clientDone && serverDone && toServer.isEmpty && toClient.isEmpty { return true }
        }
        return client.isHandshakeComplete && server.isHandshakeComplete
    }

    static func readAll(_ session: TLSSession) throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let result = try buffer.withUnsafeMutableBytes { try session.read(into: $0) }
            guard case .bytes(let count) = result else { return received }
            received += buffer[0..<count]
        }
    }

    @Test func handshakeAndDataBothWays() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let serverContext = try TLSContext.server(
            certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        let clientContext = try TLSContext.client(caFile: certificates.caFile, trustSystemRoots: false)
        for host in ["127.0.0.1", "localhost"] {
            let client = try TLSSession(context: clientContext, peerHost: host)
            let server = try TLSSession(context: serverContext)
            #expect(try Self.pump(client, server))
            #expect(client.protocolVersion == "TLSv1.3")
            let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try big.withUnsafeBytes { try client.write($0) }
            client.takeCiphertext().withUnsafeBytes { server.feed($0) }
            #expect(try Self.readAll(server) == big)
            try Array("pong".utf8).withUnsafeBytes { try server.write($0) }
            server.close()
            server.takeCiphertext().withUnsafeBytes { client.feed($0) }
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(try buffer.withUnsafeMutableBytes { try client.read(into: $0) } == .bytes(4))
            #expect(Array(buffer[0..<4]) == Array("pong".utf8))
            #expect(try buffer.withUnsafeMutableBytes { try client.read(into: $0) } == .closed)
        }
    }

    @Test func untrustedCertificateAndWrongHostAreRejected() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let serverContext = try TLSContext.server(
            certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        let untrusting = try TLSContext.client(trustSystemRoots: true)
        let trusting = try TLSContext.client(caFile: certificates.caFile)
        let cases: [(TLSContext, String, String)] = [
            (untrusting, "127.0.0.1", "unable to get local issuer certificate"),
            (trusting, "switchboard.invalid", "hostname mismatch"),
            (trusting, "127.0.0.2", "IP address mismatch"),
        ]
        for (context, host, reason) in cases {
            let client = try TLSSession(context: context, peerHost: host)
            let server = try TLSSession(context: serverContext)
            #expect(throws: TLSError(.certificate, reason)) { try Self.pump(client, server) }
        }
    }

    @Test func unusableFilesFailWithTheFileName() throws {
        let error = #expect(throws: TLSError.self) {
            try TLSContext.server(certificateFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/key.pem")
        }
        #expect(error?.kind == .configuration)
        #expect(error?.reason.contains("/nonexistent/cert.pem") == true)
        let caError = #expect(throws: TLSError.self) { try TLSContext.client(caFile: "/nonexistent/ca.pem") }
        #expect(caError?.reason.contains("/nonexistent/ca.pem") == true)
        #expect(throws: TLSError.self) { try TLSSession(context: TLSContext.client(), peerHost: nil) }
    }
}
