import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore
import SwitchboardWire

/// Whether this machine's FoundationNetworking can speak WebSocket: Apple's URLSession always can;
/// on Linux it takes a FoundationNetworking built against libcurl 7.86 or later and a libcurl with
/// WebSockets at run time. The swift.org 6.3.1 toolchain for Debian 12 has neither
/// (`nm -D libFoundationNetworking.so` lists no `curl_ws_*`), so there every task fails at once
/// with "WebSockets not supported by libcurl" (tools/test-sdk-urlsession.sh says more).
enum URLSessionWebSockets {
    /// The sentence FoundationNetworking fails with when it cannot.
    static let unsupported = "WebSockets not supported by libcurl"

    /// Nil when a URLSession WebSocket task reaches a real connection attempt (refused on a port
    /// with nothing behind it); else the reason it failed before one.
    static func missing() async -> String? {
        let settings = try? ClientSettings(
            RtmClientConfig(appId: "probe", userId: "probe", privateConfig: urlSessionConfig(["ws://127.0.0.1:9"])),
            environment: [:])
        guard let settings, let transport = try? URLSessionTransport(settings) else { return "no URLSession transport" }
        do {
            let socket = try await transport.connect(
                to: settings.servers[0], subprotocol: "probe", timeout: .seconds(5), inbox: SocketInbox())
            socket.close()
            return nil
        } catch {
            return error.reason.contains(unsupported) ? error.reason : nil
        }
    }

    static var available: Bool {
        get async { await missing() == nil }
    }

    static func urlSessionConfig(_ hosts: [String]) -> RtmPrivateConfig {
        let config = RtmPrivateConfig()
        config.accessPointHosts = hosts
        config.transport = .urlSession
        return config
    }
}

/// The URLSession transport: chosen by `RtmPrivateConfig.transport`, refusing on Linux what
/// FoundationNetworking cannot apply, and carrying a client end to end wherever URLSession can
/// speak WebSocket.
@Suite(.timeLimit(.minutes(2))) struct URLSessionTransportTests {
    func settings(_ configure: (RtmClientConfig) -> Void = { _ in }) throws -> ClientSettings {
        let config = RtmClientConfig(appId: "app", userId: "alice")
        config.privateConfig = URLSessionWebSockets.urlSessionConfig(["ws://127.0.0.1:9"])
        configure(config)
        return try ClientSettings(config, environment: [:])
    }

    @Test func theDefaultIsThePlatformsTransportAndURLSessionCanBeChosen() throws {
        #expect(try settings { $0.privateConfig?.transport = .automatic }.transport == TransportChoice.platformDefault)
        #expect(try settings { $0.privateConfig = nil }.transport == TransportChoice.platformDefault)
        #expect(try settings().transport == .urlSession)
        #expect(try settings().makeTransport() is URLSessionTransport)
        #if os(Linux)
        #expect(TransportChoice.platformDefault == .epoll)
        #expect(try settings { $0.privateConfig?.transport = .epoll }.makeTransport() is EpollTransport)
        #else
        #expect(TransportChoice.platformDefault == .urlSession)
        #expect(throws: RtmErrorInfo.self) { try settings { $0.privateConfig?.transport = .epoll } }
        #endif
    }

    #if canImport(FoundationNetworking)
    @Test func onLinuxWhatFoundationNetworkingIgnoresIsRefusedAtInitialize() throws {
        let refused: [(RtmClientConfig) -> Void] = [
            { $0.privateConfig?.tlsCAFile = "/etc/ssl/certs/ca-certificates.crt" },
            { $0.proxyConfig = RtmProxyConfig(server: "proxy.lan", port: 3128, proxyType: .http) },
        ]
        for configure in refused {
            #expect {
                _ = try settings(configure).makeTransport()
            } throws: { error in
                (error as? RtmErrorInfo)?.errorCode == .invalidPrivateConfig
                    && (error as? RtmErrorInfo)?.reason.contains("epoll transport") == true
            }
        }
        #expect(try settings { $0.privateConfig?.tlsCAFile = "/x.pem"; $0.privateConfig?.transport = .epoll }.caFile == "/x.pem")
    }
    #endif

    @Test func theProxyDictionaryNamesTheProxyForBothSchemes() {
        let dictionary = URLSessionTransport.proxyDictionary(ProxySettings(host: "proxy.lan", port: 3128))
        #expect(dictionary["HTTPEnable"] as? Int == 1 && dictionary["HTTPSEnable"] as? Int == 1)
        #expect(dictionary["HTTPProxy"] as? String == "proxy.lan" && dictionary["HTTPSProxy"] as? String == "proxy.lan")
        #expect(dictionary["HTTPPort"] as? Int == 3128 && dictionary["HTTPSPort"] as? Int == 3128)
    }

    @Test func pemCertificatesBecomeDER() async throws {
        try await TestCertificates.with { certificates in
            let pem = try #require(FileManager.default.contents(atPath: certificates.caFile))
            let twice = pem + Data("junk between\n".utf8) + pem
            let der = PEMCertificates.der(from: twice)
            #expect(der.count == 2 && der[0] == der[1])
            // A DER certificate is one SEQUENCE with a two-byte length: 0x30 0x82.
            #expect(der.first.map { Array($0.prefix(2)) } == [0x30, 0x82])
            #expect(PEMCertificates.der(from: Data("no certificate here".utf8)).isEmpty)
        }
    }

    /// Runs everywhere: either the handshake succeeds, or (on a FoundationNetworking without
    /// WebSocket) it fails at once with libcurl's sentence; a hang, a crash or another error fails.
    @Test func aConnectionAttemptOpensOrFailsCleanly() async throws {
        let server = try await TestServer.start()
        let settings = try settings { $0.privateConfig?.accessPointHosts = [server.url] }
        let transport = try URLSessionTransport(settings)
        let inbox = SocketInbox()
        do {
            let socket = try await transport.connect(
                to: settings.servers[0], subprotocol: "switchboard.v1", timeout: .seconds(5), inbox: inbox)
            #expect(socket.send(ClientFrame(id: 1, .session(.heartbeat)).encode()))
            socket.close()
        } catch {
            #expect(error.kind == .failed)
            #expect(error.reason.contains(URLSessionWebSockets.unsupported), "\(error.reason)")
        }
        transport.shutdown()
        await server.shutdown()
    }

    @Test(.enabled("needs a FoundationNetworking that speaks WebSocket") { await URLSessionWebSockets.available })
    func aURLSessionClientAndAnEpollClientTalk() async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server) { $0.privateConfig?.transport = .urlSession }
        let (bob, bobLog) = try makeClient("bob", server: server) { $0.privateConfig?.transport = .automatic }
        #expect(await alice.engine.transport is URLSessionTransport)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        expectOK(await alice.publish(channelName: "room", message: "from URLSession", option: nil))
        expectOK(await bob.publish(channelName: "room", message: "from epoll", option: nil))
        for log in [aliceLog, bobLog] {
            #expect(await log.wait { log in
                Set(log.messages.compactMap(\.message.stringData)).isSuperset(of: ["from URLSession", "from epoll"])
            })
        }
        expectOK(await alice.logout())
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }
}
