import Foundation
import Testing
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting

/// The server API from outside: Python's http.client for every call, the protocol peer of
/// tools/peer.py (written from docs/PROTOCOL.md) as the clients that see its effects.
@Suite(.timeLimit(.minutes(5))) struct ServerAPITests {
    static let appId = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"
    static let key = "test-api-key-0123456789"

    /// A server with an admin listener and the API opened by `key`, holding the app's certificate.
    static func start(
        callsPerSecond: Int? = 1_000, clock: any SwitchboardClock = SystemClock(),
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (server: SwitchboardServer, admin: Int) {
        let server = try await TestServer.start(clock: clock) { configuration in
            configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
            configuration.serverAPI = ServerAPISettings(keys: .keys([key]), callsPerSecondPerKey: callsPerSecond)
            configuration.appIds = [appId]
            configure(&configuration)
        } modules: { modules in
            modules.extensions.append(Crypto(credentials: [appId: certificate]))
        }
        return (server, try #require(server.adminPort))
    }

    /// Runs tools/api_call.py: one call, its status and body.
    static func call(_ admin: Int, _ method: String, key: String = key, _ json: String = "{\"appId\": \"\(appId)\"}") async throws
        -> (status: String, body: String)
    {
        let result = try await ProcessRunner.python("api_call.py", ["\(admin)", key, method, json], timeout: .seconds(30))
        #expect(result.status == 0, "\(result.text)")
        let lines = result.text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        return (lines.first ?? "", lines.count > 1 ? lines[1] : "")
    }

    @Test func everyMethodFromPythonWithItsEffectsOnRealClients() async throws {
        let (server, admin) = try await Self.start()
        let output = try await ProcessRunner.python(
            "peer_api.py", ["--url", server.url, "--admin-port", "\(admin)", "--api-key", Self.key, "--app-id", Self.appId])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains(" 0 failed"), "\(output.text)")
    }

    @Test func aKeyOverItsRateIsRefusedWith429() async throws {
        let (server, admin) = try await Self.start(callsPerSecond: 5, clock: ManualClock())
        let output = try await ProcessRunner.python(
            "peer_api.py",
            ["--url", server.url, "--admin-port", "\(admin)", "--api-key", Self.key, "--app-id", Self.appId, "--scenario", "rate"])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains(" 0 failed"), "\(output.text)")
    }

    @Test func withoutKeysTheAPIIsNotThere() async throws {
        let (server, admin) = try await startWithAdmin()
        let answer = try await Self.call(admin, "info")
        #expect(answer.status == "404")
        #expect(answer.body.hasPrefix("no such endpoint"))
        await server.shutdown()
    }

    @Test func whileShuttingDownTheAPIAnswers503() async throws {
        let clock = ManualClock()
        let (server, admin) = try await Self.start(clock: clock) { $0.shutdownDrain = .seconds(5) }
        #expect(try await Self.call(admin, "info").status == "200")
        let stopping = Task { await server.shutdown() }
        var answer = (status: "", body: "")
        let deadline = ContinuousClock.now + Patience.standard
        repeat {
            answer = try await Self.call(admin, "info")
        } while answer.status != "503" && ContinuousClock.now < deadline
        #expect(answer.status == "503")
        #expect(answer.body.contains("\"code\":\(RtmErrorCode.notInitialized.rawValue)"))
        #expect(await eventually {
            clock.advance(by: .seconds(5))
            return server.port == nil
        })
        await stopping.value
    }

    @Test func anUnreadableKeyFileStopsTheStartNamingIt() async throws {
        await #expect(throws: ServerError.apiKeys("cannot read the API key file /nonexistent/switchboard-keys")) {
            _ = try await TestServer.start { configuration in
                configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
                configuration.serverAPI = ServerAPISettings(keys: .file("/nonexistent/switchboard-keys"))
            }
        }
    }
}

extension ServerAPITests {
    @Test func hostileBodiesAreRefusedWith400AndTheServerGoesOn() async throws {
        let (server, admin) = try await Self.start()
        for body in [String(repeating: "[", count: 20_000), "{\"appId\": 1e999}", "{\"appId\": \"a\", \"appId\": \"b\"}", "[]", "\"text\""] {
            let answer = try await Self.call(admin, "info", body)
            #expect(answer.status == "400", "\(body.prefix(40)): \(answer)")
            #expect(answer.body.contains("\"code\":\(RtmErrorCode.invalidParameter.rawValue)"))
        }
        let batch = "{\"calls\": [{\"method\": \"info\", \"params\": [1]}]}"
        #expect(try await Self.call(admin, "batch", batch).status == "400")
        #expect(try await Self.call(admin, "info").status == "200")
        await server.shutdown()
    }
}

extension ServerAPITests {
    @Test func mintingOnAServerWithoutCertificatesIs501() async throws {
        let server = try await TestServer.start { configuration in
            configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
            configuration.serverAPI = ServerAPISettings(keys: .keys([Self.key]))
        }
        let admin = try #require(server.adminPort)
        let answer = try await Self.call(admin, "mintToken", #"{"appId": "demo", "userId": "alice"}"#)
        #expect(answer.status == "501")
        #expect(answer.body.contains("\"code\":\(RtmErrorCode.serviceNotSupport.rawValue)"))
        await server.shutdown()
    }
}
