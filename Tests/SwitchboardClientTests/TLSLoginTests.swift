import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardCore

/// The SDK against a server serving `wss://` with a throwaway CA's certificate.
@Suite(.timeLimit(.minutes(1))) struct TLSLoginTests {
    /// Runs `body` with a TLS server presenting the `127.0.0.1` certificate, or the certificate
    /// for another host name when `otherHost` is set.
    func withTLSServer(
        otherHost: Bool = false, _ body: (TestCertificates, SwitchboardServer) async throws -> Void
    ) async throws {
        try await TestCertificates.with { certificates in
            let server = try await TestServer.start(configure: {
                $0.tls = otherHost
                    ? ServerTLS(certificatePath: certificates.otherHostCertificateFile, keyPath: certificates.otherHostKeyFile)
                    : ServerTLS(certificatePath: certificates.certificateFile, keyPath: certificates.keyFile)
            })
            do {
                try await body(certificates, server)
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
        }
    }

    @Test func loginSubscribePublishAndReceiveOverWSS() async throws {
        try await withTLSServer { certificates, server in
            #expect(server.url.hasPrefix("wss://127.0.0.1:"))
            let trustCA: (RtmClientConfig) -> Void = { $0.privateConfig?.tlsCAFile = certificates.caFile }
            let (alice, _) = try makeClient("alice", server: server, configure: trustCA)
            let (bob, bobLog) = try makeClient("bob", server: server, configure: trustCA)
            expectOK(await alice.login(""))
            expectOK(await bob.login(""))
            expectOK(await bob.subscribe(channelName: "room", option: nil))
            let big = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0) })
            expectOK(await alice.publish(channelName: "room", message: "hello over TLS", option: nil))
            expectOK(await alice.publish(channelName: "room", data: big, option: nil))
            #expect(await bobLog.wait { $0.messages.count == 2 })
            #expect(bobLog.messages.first?.message.stringData == "hello over TLS")
            #expect(bobLog.messages.last?.message.rawData == big)
            #expect(bobLog.messages.allSatisfy { $0.publisher == "alice" })
            alice.destroy()
            bob.destroy()
        }
    }

    @Test func untrustedCertificateFailsTheLogin() async throws {
        try await withTLSServer { _, server in
            let (client, log) = try makeClient("alice", server: server)
            let result = await client.login("")
            expectError(.loginAborted, result)
            #expect(result.1?.reason.contains("unable to get local issuer certificate") == true, "\(String(describing: result.1))")
            #expect(await log.wait { $0.linkStates.last?.currentState == .failed })
            client.destroy()
        }
    }

    @Test func certificateForAnotherHostFailsTheLogin() async throws {
        try await withTLSServer(otherHost: true) { certificates, server in
            let (client, _) = try makeClient("alice", server: server) { $0.privateConfig?.tlsCAFile = certificates.caFile }
            let result = await client.login("")
            expectError(.loginAborted, result)
            #expect(result.1?.reason.contains("IP address mismatch") == true, "\(String(describing: result.1))")
            client.destroy()
        }
    }

    @Test func onlyCertificateRefusalsEndTheLogin() {
        let refused = RtmErrorInfo.connectFailure(
            EpollTransport.failure(WebSocketClientError.tlsFailed(TLSError(.certificate, "hostname mismatch"))),
            url: "wss://h:1/")
        #expect(refused.errorCode == .loginAborted)
        #expect(LinkMachine.fatalReason(forLoginError: refused.errorCode) != nil)
        let broken = RtmErrorInfo.connectFailure(
            EpollTransport.failure(WebSocketClientError.tlsFailed(TLSError(.connection, "unexpected eof"))),
            url: "wss://h:1/")
        #expect(broken.errorCode == .notConnected)
        #expect(LinkMachine.fatalReason(forLoginError: broken.errorCode) == nil)
    }

    @Test func unreadableCAFileIsAConfigurationError() throws {
        let config = RtmClientConfig(appId: "test-app", userId: "alice")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = ["wss://127.0.0.1:9"]
        config.privateConfig?.tlsCAFile = "/nonexistent/ca.pem"
        #expect(throws: RtmErrorInfo.self) { try RtmClientKit(config, delegate: nil) }
        do {
            _ = try RtmClientKit(config, delegate: nil)
        } catch let error as RtmErrorInfo {
            #expect(error.errorCode == .invalidPrivateConfig)
        }
    }
}
