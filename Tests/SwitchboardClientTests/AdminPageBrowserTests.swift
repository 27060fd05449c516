import Foundation
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting

/// The admin page in a real browser (Debian's chromium, headless, driven by selenium from
/// tools/admin_page_check.py) against an in-process server with an SDK client connected: the page
/// shows the client within two seconds of its key; its publish button reaches the client, its
/// revoke button takes the client's lock, and its kick button ends the client's session as the
/// server API's `disconnect` does.
@Suite(.timeLimit(.minutes(2))) struct AdminPageBrowserTests {
    static let key = "admin-page-key-0123456789"

    /// The browser is there, or the run must have it: CI installs chromium (.ci/run), so there
    /// the test runs, and fails, rather than skips, when it is missing.
    static let browserAvailable =
        ProcessInfo.processInfo.environment["CI"] != nil
        || (FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"))

    @Test(.enabled(if: browserAvailable, "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"))
    func thePageShowsAConnectedClientAndItsButtonsPublishToItRevokeItsLockAndKickIt() async throws {
        let server = try await TestServer.start { configuration in
            configuration.adminListener = AdminListener(host: "127.0.0.1", port: 0)
            configuration.serverAPI = ServerAPISettings(keys: .keys([Self.key]))
        }
        let admin = try #require(server.adminPort)
        let (alice, log) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        let everything = RtmSubscribeOptions()
        everything.features = [.message, .presence, .lock]
        expectOK(await alice.subscribe(channelName: "room", option: everything))
        let lock = try #require(alice.getLock())
        expectOK(await lock.setLock(channelName: "room", channelType: .message, lockName: "stage", ttl: 30))
        let (held, _) = await lock.acquireLock(channelName: "room", channelType: .message, lockName: "stage", retry: false)
        #expect(held != nil)

        let output = try await ProcessRunner.python(
            "admin_page_check.py",
            [
                "check", "--admin-port", "\(admin)", "--api-key", Self.key, "--app-id", "test-app", "--channel", "room", "--user", "alice",
                "--lock", "stage",
            ],
            timeout: .seconds(60))
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("admin page: 0 failed"), "\(output.text)")

        // The page's test message reached the client, and its revoke took the lock from it.
        #expect(log.messages.contains { $0.message.stringData == "test message from the admin page" && $0.publisher == "server" })
        #expect(log.lockEvents.contains { $0.eventType == .lockReleased && $0.lockDetailList.contains { $0.lockName == "stage" } })
        // The client learns it was kicked, with the reference's reason, and is logged out.
        #expect(await log.wait { $0.linkStates.last?.currentState == .failed })
        let failed = try #require(log.linkStates.last)
        #expect(failed.reasonCode == .kickedOutByServer)
        #expect(failed.operation == .serverReject)
        alice.destroy()
        await server.shutdown()
    }
}
