import Foundation
import Testing

@testable import SwitchboardClient
import SwitchboardCore

/// The shapes of seed 000 that a porting app uses unchanged compile and behave as documented.
@Suite(.timeLimit(.minutes(5))) struct PortingShapesTests {
    @Test func theFullConfigInitializerTakesEveryLabelOfTheReference() {
        let proxy = RtmProxyConfig()
        let log = RtmLogConfig()
        let encryption = RtmEncryptionConfig()
        let privateConfig = RtmPrivateConfig()
        let config = RtmClientConfig(
            appId: "app", userId: "42", useStringUserId: false, ispPolicyEnabled: true, multipath: true,
            presenceTimeout: 30, heartbeatInterval: 10, reconnectTimeout: 60, areaCode: .CN, proxyConfig: proxy,
            protocolType: .tcpOnly, logConfig: log, encryptionConfig: encryption, privateConfig: privateConfig)
        #expect(config.appId == "app" && config.userId == "42")
        #expect(!config.useStringUserId && config.ispPolicyEnabled && config.multipath)
        #expect(config.presenceTimeout == 30 && config.heartbeatInterval == 10 && config.reconnectTimeout == 60)
        #expect(config.areaCode == .CN && config.protocolType == .tcpOnly)
        #expect(config.proxyConfig === proxy && config.logConfig === log)
        #expect(config.encryptionConfig === encryption && config.privateConfig === privateConfig)
    }

    @Test func theInitializerDefaultsAreTheReferences() {
        let config = RtmClientConfig(appId: "app", userId: "alice")
        #expect(config.useStringUserId && !config.ispPolicyEnabled && !config.multipath)
        #expect(config.presenceTimeout == 300 && config.heartbeatInterval == 5 && config.reconnectTimeout == 0)
        #expect(config.areaCode == .GLOB && config.protocolType == .tcpUdp)
        #expect(config.proxyConfig == nil && config.logConfig == nil)
        #expect(config.encryptionConfig == nil && config.privateConfig == nil)
    }

    @Test func aProxyConfigStartsWithNoProxy() {
        let proxy = RtmProxyConfig()
        #expect(proxy.proxyType == .none && proxy.server == "" && proxy.port == 0)
        #expect(proxy.account == "" && proxy.password == "")
        let http = RtmProxyConfig(server: "proxy.local", port: 8080, proxyType: .http)
        #expect(http.server == "proxy.local" && http.port == 8080 && http.proxyType == .http)
    }

    @Test func anErrorInfoIsAnNSError() {
        let info = RtmErrorInfo(.invalidToken, operation: "login", reason: "token signature does not match")
        let error: NSError = info
        #expect(error.domain == RtmErrorInfo.domain)
        #expect(error.code == -10005)
        #expect(error.localizedDescription == "login failed: token signature does not match")
        let thrown: any Error = info
        #expect((thrown as? RtmErrorInfo)?.errorCode == .invalidToken)
        let wrapped = RtmErrorInfo(RtmError(.tokenExpired, operation: "renewToken", reason: "expired"))
        #expect(wrapped.code == -10009 && wrapped.operation == "renewToken" && wrapped.reason == "expired")
    }

    @Test func withoutAccessPointsTheClientUsesSwitchboardURLElseTheLocalDefault() throws {
        let config = RtmClientConfig(appId: "app", userId: "alice")
        #expect(try ClientSettings(config, environment: [:]).servers.map(\.url) == ["ws://127.0.0.1:9100/"])
        let fromEnvironment = try ClientSettings(config, environment: ["SWITCHBOARD_URL": "wss://signal.example:9443"])
        #expect(fromEnvironment.servers.map(\.url) == ["wss://signal.example:9443/"])
        config.privateConfig = RtmPrivateConfig()
        #expect(try ClientSettings(config, environment: [:]).servers.map(\.url) == ["ws://127.0.0.1:9100/"])
        config.privateConfig?.accessPointHosts = ["ws://10.0.0.7:9200"]
        let named = try ClientSettings(config, environment: ["SWITCHBOARD_URL": "ws://ignored:1"])
        #expect(named.servers.map(\.url) == ["ws://10.0.0.7:9200/"])
        #expect(throws: Never.self) { try RtmClientKit(RtmClientConfig(appId: "app", userId: "bob"), delegate: nil).destroy() }
        #expect(named.warnings.isEmpty)
    }

    @Test func withoutAccessPointsTheClientWarnsThatItUsesTheLocalDefault() throws {
        let config = RtmClientConfig(appId: "app", userId: "alice")
        #expect(try ClientSettings(config, environment: [:]).warnings == [
            "privateConfig.accessPointHosts is empty and SWITCHBOARD_URL is unset: using the local default, ws://127.0.0.1:9100"
        ])
        #expect(try ClientSettings(config, environment: ["SWITCHBOARD_URL": "ws://10.0.0.7:9200"]).warnings == [
            "privateConfig.accessPointHosts is empty: using SWITCHBOARD_URL, ws://10.0.0.7:9200"
        ])
        // The warning is in the SDK's log, at warning level, as soon as the client is made.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = RtmLogConfig()
        log.filePath = folder.path
        log.level = .warn
        config.logConfig = log
        try RtmClientKit(config, delegate: nil).destroy()
        let written = try String(contentsOf: folder.appendingPathComponent("agora.log"), encoding: .utf8)
        #expect(written.contains("[WARN] privateConfig.accessPointHosts is empty"), "\(written)")
    }
}
