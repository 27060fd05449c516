import Foundation
import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// A client behind an HTTP proxy reaches its server through a `CONNECT` tunnel.
@Suite(.timeLimit(.minutes(1))) struct ProxyConnectTests {
    @Test func theClientTunnelsThroughTheProxyAndTalks() async throws {
        let proxy = try ConnectProxy()
        defer { proxy.stop() }
        let serverSide = RecordingHandler(echo: true)
        try await withServer(handler: serverSide) { _, port, group in
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: "ws://127.0.0.1:\(port)/room", proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port),
                group: group, handler: client)
            #expect(proxy.heads == ["CONNECT 127.0.0.1:\(port) HTTP/1.1\r\nHost: 127.0.0.1:\(port)"])
            #expect(connection.remoteAddress == "127.0.0.1:\(proxy.port)")
            await expectEchoRoundTrip(over: connection, seenBy: client)
            #expect(serverSide.opened.first?.requestPath == "/room")
        }
    }

    @Test func aProxyThatWantsCredentialsGetsThemAsBasicAuthorization() async throws {
        let proxy = try ConnectProxy(username: "ops", password: "s3cret")
        defer { proxy.stop() }
        try await withServer { _, port, group in
            let url = "ws://127.0.0.1:\(port)/"
            await #expect(throws: WebSocketClientError.proxyFailed("the proxy refused the tunnel: 407 Proxy Authentication Required")) {
                try await WebSocketClient.connect(
                    to: url, proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port), group: group, handler: RecordingHandler())
            }
            await #expect(throws: WebSocketClientError.self) {
                try await WebSocketClient.connect(
                    to: url, proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port, username: "ops", password: "wrong"),
                    group: group, handler: RecordingHandler())
            }
            let client = RecordingHandler()
            let connection = try await WebSocketClient.connect(
                to: url, proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port, username: "ops", password: "s3cret"),
                group: group, handler: client)
            await expectEchoRoundTrip(over: connection, seenBy: client)
            #expect(proxy.heads.last?.contains("Proxy-Authorization: Basic b3BzOnMzY3JldA==") == true)
            #expect(proxy.heads.count == 3)
        }
    }

    @Test func theConnectRequestNamesTheTargetAndTheAnswerMustBe2xx() throws {
        let proxy = HTTPProxy(host: "proxy", port: 3128)
        #expect(String(decoding: proxy.connectRequest(toHost: "::1", port: 9100), as: UTF8.self)
            == "CONNECT [::1]:9100 HTTP/1.1\r\nHost: [::1]:9100\r\n\r\n")
        try HTTPProxy.checkConnectResponse(Array("HTTP/1.0 200 Connection established\r\n\r\n".utf8))
        #expect(throws: WebSocketClientError.proxyFailed("the proxy refused the tunnel: 403 Forbidden")) {
            try HTTPProxy.checkConnectResponse(Array("HTTP/1.1 403 Forbidden\r\n\r\n".utf8))
        }
        #expect(throws: WebSocketClientError.proxyFailed("the proxy's answer is not HTTP")) {
            try HTTPProxy.checkConnectResponse(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8))
        }
    }
}
