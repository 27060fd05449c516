import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// What the SDK does with `RtmProxyConfig` and `RtmLogConfig` on a real connection.
@Suite(.timeLimit(.minutes(5))) struct ClientPlumbingTests {
    @Test func anHTTPProxyConfigCarriesTheConnection() async throws {
        let server = try await TestServer.start()
        let proxy = try ConnectProxy(username: "ops", password: "s3cret")
        let proxyConfig = RtmProxyConfig(server: "127.0.0.1", port: UInt16(proxy.port), proxyType: .http)
        proxyConfig.account = "ops"
        proxyConfig.password = "s3cret"
        let (client, _) = try makeClient("alice", server: server) { $0.proxyConfig = proxyConfig }
        expectOK(await client.login(""))
        expectOK(await client.subscribe(channelName: "room", option: nil))
        let port = try #require(server.port)
        #expect(proxy.heads.count == 1)
        #expect(proxy.heads.first?.hasPrefix("CONNECT 127.0.0.1:\(port) HTTP/1.1") == true)
        client.destroy()
        proxy.stop()
        await server.shutdown()
    }

    @Test func theLogConfigGetsTheLinkStatesAndRefusals() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-log-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await TestServer.start()
        let logConfig = RtmLogConfig()
        logConfig.filePath = folder
        logConfig.level = .info
        let (client, events) = try makeClient("alice", server: server) { $0.logConfig = logConfig }
        expectOK(await client.login(""))
        expectError(.invalidChannelName, await client.subscribe(channelName: "", option: nil))
        expectOK(await client.logout())
        #expect(await events.wait { $0.linkStates.last?.currentState == .idle })
        let text = try String(contentsOfFile: folder + "/agora.log", encoding: .utf8)
        #expect(text.contains("link idle -> connecting"))
        #expect(text.contains("link connecting -> connected"))
        #expect(text.contains("link connected -> idle"))
        #expect(text.contains("invalidChannelName"))
        client.destroy()
        await server.shutdown()
    }
}
