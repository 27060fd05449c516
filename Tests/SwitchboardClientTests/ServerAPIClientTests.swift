import Foundation
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting

/// The server API's effects as the SDK reports them, the API called from Python's http.client.
@Suite(.timeLimit(.minutes(2))) struct ServerAPIClientTests {
    static let key = "sdk-test-api-key-0123456789"

    func start() async throws -> (SwitchboardServer, Int) {
        let server = try await TestServer.start { configuration in
            configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
            configuration.serverAPI = ServerAPISettings(keys: .keys([Self.key]))
        }
        return (server, try #require(server.adminPort))
    }

    func call(_ admin: Int, _ method: String, _ json: String) async throws -> String {
        let result = try await ProcessRunner.python("api_call.py", ["\(admin)", Self.key, method, json], timeout: .seconds(30))
        #expect(result.status == 0, "\(result.text)")
        return result.text
    }

    @Test func aServerPublishReachesTheSDKAndADisconnectFailsItsLinkAsKickedOutByServer() async throws {
        let (server, admin) = try await start()
        let (alice, log) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))

        let published = try await call(admin, "publish", #"{"appId": "test-app", "channel": "room", "message": "hello", "from": "ops"}"#)
        #expect(published.hasPrefix("200"), "\(published)")
        #expect(await log.wait { $0.messages.contains { $0.message.stringData == "hello" && $0.publisher == "ops" } })

        let kicked = try await call(admin, "disconnect", #"{"appId": "test-app", "userId": "alice", "reason": "banned"}"#)
        #expect(kicked.contains(#"{"sessions":1}"#), "\(kicked)")
        #expect(await log.wait { $0.linkStates.last?.currentState == .failed })
        let failed = try #require(log.linkStates.last)
        #expect(failed.reasonCode == .kickedOutByServer)
        #expect(failed.operation == .serverReject)
        expectError(.notLogin, await alice.publish(channelName: "room", message: "x", option: nil))
        alice.destroy()
        await server.shutdown()
    }
}
