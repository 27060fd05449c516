import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting
import SwitchboardTransport
import SwitchboardWire

/// Starts a server with an admin listener on a free port.
func startWithAdmin(
    clock: any SwitchboardClock = SystemClock(), configure: (inout ServerConfiguration) -> Void = { _ in }
) async throws -> (server: SwitchboardServer, admin: Int) {
    let server = try await TestServer.start(clock: clock) { configuration in
        configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
        configure(&configuration)
    }
    return (server, try #require(server.adminPort))
}

/// Runs tools/admin_probe.py (Python's http.client) against the admin port; returns its lines.
func adminProbe(_ arguments: [String]) async throws -> [String] {
    let result = try await ProcessRunner.python("admin_probe.py", arguments, timeout: .seconds(30))
    #expect(result.status == 0, "\(result.text)")
    return result.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

/// The admin listener from an independent HTTP client: health, routing and the drain at shutdown.
@Suite(.timeLimit(.minutes(3))) struct AdminListenerTests {
    @Test func liveAndReadyAnswerWhileTheServerServes() async throws {
        let (server, admin) = try await startWithAdmin()
        let live = try await adminProbe(["request", "\(admin)", "GET", "/health/live"])
        #expect(live.prefix(3) == ["200", "-", "{\"status\":\"live\"}"])
        let ready = try await adminProbe(["request", "\(admin)", "GET", "/health/ready"])
        #expect(ready.prefix(3) == ["200", "-", "{\"status\":\"ready\",\"checks\":{\"listener\":\"ok\"}}"])
        await server.shutdown()
    }

    @Test func unknownPathsAre404AndOtherMethods405() async throws {
        let (server, admin) = try await startWithAdmin()
        #expect(try await adminProbe(["request", "\(admin)", "GET", "/nowhere"]).first == "404")
        let post = try await adminProbe(["request", "\(admin)", "POST", "/metrics"])
        #expect(post.prefix(2) == ["405", "GET, HEAD"])
        #expect(try await adminProbe(["request", "\(admin)", "HEAD", "/health/live"]).first == "200")
        #expect(try await adminProbe(["keepalive", "\(admin)", "5"]).first == "reused 5")
        await server.shutdown()
    }

    @Test func anAddedCheckThatFailsMakesTheNodeNotReadyAndSaysWhy() async throws {
        let (server, admin) = try await startWithAdmin()
        server.readiness.add(ReadinessProbe("redis") { .notReady("connection refused") })
        let ready = try await adminProbe(["request", "\(admin)", "GET", "/health/ready"])
        #expect(ready.first == "503")
        #expect(ready[2] == "{\"status\":\"not ready\",\"checks\":{\"listener\":\"ok\",\"redis\":\"connection refused\"}}")
        await server.shutdown()
    }

    @Test func shutdownReportsNotReadyWhileConnectionsAreStillServed() async throws {
        let clock = ManualClock()
        let (server, admin) = try await startWithAdmin(clock: clock) { $0.shutdownDrain = .seconds(5) }
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let client = try await RawClient.connect(to: server.url, group: group)
        #expect(await client.login("alice").isSuccess)
        #expect(try await adminProbe(["request", "\(admin)", "GET", "/health/ready"]).first == "200")

        let stopping = Task { await server.shutdown() }
        // Ready turns off first...
        var ready: [String] = []
        let deadline = ContinuousClock.now + Patience.standard
        repeat {
            ready = try await adminProbe(["request", "\(admin)", "GET", "/health/ready"])
        } while ready.first != "503" && ContinuousClock.now < deadline
        #expect(ready.first == "503")
        #expect(ready.count > 2 && ready[2].contains("\"listener\":\"shutting down\""))
        // ...while the client is still connected and answered, and the node still live.
        #expect(client.closeCode == nil)
        client.send(.subscribe(id: 2, channel: "room", features: .defaultFeatures))
        #expect(await client.answer(to: 2).isSuccess)
        #expect(try await adminProbe(["request", "\(admin)", "GET", "/health/live"]).first == "200")
        // Once the drain is over, connections are closed.
        #expect(await eventually {
            clock.advance(by: .seconds(5))
            return client.closeCode != nil
        })
        await stopping.value
    }

    @Test func theAdminPageIsServedFromTheBinaryEvenWithoutTheAPI() async throws {
        let (server, admin) = try await startWithAdmin()
        let page = try await adminProbe(["request", "\(admin)", "GET", "/"])
        #expect(page.first == "200")
        #expect(page.contains("<title>Switchboard admin</title>"))
        let script = try await adminProbe(["request", "\(admin)", "GET", "/admin.js"])
        #expect(script.first == "200")
        #expect(script.contains { $0.contains("the server API is off") })
        await server.shutdown()
    }

    @Test func anEmbeddedServerHasNoAdminListenerUnlessAsked() async throws {
        let server = try await TestServer.start()
        #expect(server.adminPort == nil)
        await server.shutdown()
    }
}

extension AdminListenerTests {
    @Test func withAdminTLSTheListenerServesHTTPSWithTheServersCertificateAndNoPlainHTTP() async throws {
        try await TestCertificates.with { certificates in
            let (server, admin) = try await startWithAdmin { configuration in
                configuration.tls = ServerTLS(certificatePath: certificates.certificateFile, keyPath: certificates.keyFile)
                configuration.adminListener?.tls = true
            }
            let result = try await ProcessRunner.python(
                "admin_probe.py", ["tls", "\(admin)", certificates.caFile, "/health/ready"], timeout: .seconds(30))
            await server.shutdown()
            #expect(result.status == 0, "\(result.text)")
            let lines = result.text.split(separator: "\n").map(String.init)
            #expect(lines.prefix(3) == ["200", "{\"status\":\"ready\",\"checks\":{\"listener\":\"ok\"}}", "plain closed"], "\(result.text)")
        }
    }

    @Test func adminTLSWithoutACertificateStopsTheStart() async throws {
        await #expect(throws: ServerError.adminTLSWithoutCertificate) {
            _ = try await startWithAdmin { $0.adminListener?.tls = true }
        }
    }

    /// The hostile-input cases of the HTTP server, on the admin port as the server sets it up (the
    /// API's 1 MiB bodies, its routes), with 50 slowloris sockets open all along.
    @Test func hostileClientsOnTheAdminPortGetTheirStatusWhileOthersAreServed() async throws {
        let (server, admin) = try await ServerAPITests.start()
        let lines = try await adminProbe(["hostile", "\(admin)", ServerAPITests.key])
        await server.shutdown()
        #expect(lines.prefix(10) == [
            "prompt-beside-slowloris 200 with 50 slow heads open",
            "huge-head 431",
            "huge-body 413",
            "chunked-body 501",
            "bad-json 400",
            "get-api 405 allow=POST",
            "delete-page 405 allow=GET, HEAD",
            "not-http 400",
            "bad-request-line 400",
            "afterwards 200",
        ])
    }
}
