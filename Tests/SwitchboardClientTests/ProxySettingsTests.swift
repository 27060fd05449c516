import Foundation
import Testing

@testable import SwitchboardClient
import SwitchboardCore

/// `RtmProxyConfig` becomes the HTTP proxy the client connects through.
@Suite(.timeLimit(.minutes(5))) struct ProxySettingsTests {
    func settings(_ proxy: RtmProxyConfig?) throws -> ClientSettings {
        try ClientSettings(RtmClientConfig(appId: "app", userId: "alice", proxyConfig: proxy), environment: [:])
    }

    @Test func anHTTPProxyConfigNamesTheProxyAndItsCredentials() throws {
        #expect(try settings(nil).proxy == nil)
        #expect(try settings(RtmProxyConfig()).proxy == nil)
        #expect(try settings(RtmProxyConfig(server: "cloud", port: 443, proxyType: .cloudTcp)).proxy == nil)
        let open = RtmProxyConfig(server: "proxy.lan", port: 3128, proxyType: .http)
        #expect(try settings(open).proxy == ProxySettings(host: "proxy.lan", port: 3128))
        open.account = "ops"
        open.password = "s3cret"
        #expect(try settings(open).proxy == ProxySettings(host: "proxy.lan", port: 3128, username: "ops", password: "s3cret"))
    }

    @Test func anHTTPProxyWithoutServerOrPortIsInvalidParameter() {
        for proxy in [RtmProxyConfig(server: "", port: 3128, proxyType: .http), RtmProxyConfig(server: "p", proxyType: .http)] {
            #expect {
                _ = try settings(proxy)
            } throws: { error in
                (error as? RtmErrorInfo)?.errorCode == .invalidParameter && (error as? RtmErrorInfo)?.operation == "initialize"
            }
        }
    }
}
