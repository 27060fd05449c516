import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWebhooks
import SwitchboardWire

/// Webhooks end to end: real clients make the events, a real receiver in Python
/// (tools/webhook_receiver.py) checks every signature with `hmac`; retries after failures, order
/// per user, and a `switchboard serve` killed with deliveries waiting.
@Suite(.serialized, .timeLimit(.minutes(5))) struct WebhookTests {
    static let secret = "webhook-secret"

    func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-webhooks-\(UUID())")
    }

    /// A client logged in with a presence timeout of `presenceTimeout` seconds (1 s by default, so
    /// a cut connection times out quickly). It sends no heartbeats, so it asks for the longest
    /// interval: a silent client with 5 s counts as lost 15 s on, which a loaded run reached while
    /// waiting for alice's timeout (bob then timed out of the room instead of leaving it).
    func client(
        _ userId: String, _ server: SwitchboardServer, _ group: EventLoopGroup, presenceTimeout: Int = 1
    ) async throws -> RawClient {
        let client = try await RawClient.connect(to: server.url, group: group)
        client.send(ClientFrame(id: 1, .session(.login(Login(
            appId: "test-app", userId: userId, token: "", heartbeatInterval: 1800, presenceTimeout: presenceTimeout)))))
        #expect(await client.answer(to: 1)?.loginAccepted != nil)
        return client
    }

    /// Sends `frame` and expects an answer that is not an error.
    func ok(_ client: RawClient, _ frame: ClientFrame) async {
        client.send(frame)
        let answer = await client.answer(to: frame.id)
        #expect(answer != nil && answer?.errorCode == nil, "\(frame): \(String(describing: answer))")
    }

    @Test func everyEventTypeArrivesSignedInOrderPerUserAfterTheReceiverFailedThreeTimes() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try await WebhookReceiver.start(in: folder, secret: Self.secret, ["--fail-first", "3"])
        var limits = Limits()
        limits.sessions.presenceTimeoutRange = 1...300
        let server = try await TestServer.start(limits: limits) { configuration in
            var webhooks = WebhookConfiguration(targets: [WebhookTarget(url: receiver.url)], secret: Array(Self.secret.utf8))
            webhooks.backoff = WebhookBackoff(first: .milliseconds(50), max: .milliseconds(200))
            webhooks.attemptTimeout = .seconds(5)
            configuration.webhooks = webhooks
            configuration.dataDirectory = folder.appendingPathComponent("data").path
        }
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let room = ChannelAddress(.message, "room")
        let lock = LockAddress(.message, "room", "L")
        let features: RtmSubscribeChannelFeature = [.message, .presence, .lock, .metadata]

        // alice's session outlives her lock's 10 s ttl once her connection is cut, so the lock
        // expires (a session that ends first releases its locks instead).
        let alice = try await client("alice", server, group, presenceTimeout: 12)
        await ok(alice, .subscribe(id: 2, channel: "room", features: features))
        let bob = try await client("bob", server, group)
        await ok(bob, .subscribe(id: 2, channel: "room", features: features))
        await ok(alice, ClientFrame(id: 3, .presence(.setState(channel: room, items: [StateItem(key: "mood", value: "busy")]))))
        await ok(alice, .storage(id: 4, .setChannel("room", [("topic", "news")])))
        await ok(alice, .storage(id: 5, .setUser("alice", [("city", "Oslo")])))
        await ok(alice, .lock(id: 6, .setLock(lock, ttl: 10)))
        await ok(alice, .lock(id: 7, .acquireLock(lock, retry: false)))
        await ok(alice, .lock(id: 8, .releaseLock(lock)))
        await ok(bob, .lock(id: 9, .acquireLock(lock, retry: false)))
        await ok(alice, .lock(id: 10, .revokeLock(lock, userId: "bob")))
        await ok(alice, .lock(id: 11, .acquireLock(lock, retry: false)))
        bob.send(.publish(id: 12, channelType: .user, channel: "carol", message: .string("are you there?")))
        #expect(await bob.answer(to: 12)?.errorCode == .channelReceiverOffline)
        // Alice's connection is cut: her lock's 10 s ttl runs out, then her 12 s presence timeout,
        // and she times out of the room and goes offline. Bob logs out; Dave is kicked by the server.
        alice.connection.close()
        #expect(await eventually(within: .seconds(40)) {
            receiver.taken.contains { $0["type"] as? String == "user.offline" && $0["user"] as? String == "alice" }
        })
        await ok(bob, .logout(id: 13))
        let dave = try await client("dave", server, group)
        _ = try await server.bus.request(DisconnectUser(caller: .server(app: "test-app", userId: "api"), userId: "dave"))
        #expect(await eventually { receiver.taken.contains { $0["type"] as? String == "user.offline" && $0["user"] as? String == "dave" } })
        dave.connection.close()

        let requests = receiver.requests
        #expect(requests.prefix(3).allSatisfy { $0["status"] as? Int == 500 }, "the first three were refused")
        #expect(requests.allSatisfy { $0["verified"] as? Bool == true }, "every signature checks out with Python's hmac")
        let taken = receiver.taken
        #expect(Set(taken.compactMap { $0["type"] as? String }) == Set(WebhookEventType.allCases.map(\.rawValue)))
        #expect(taken.allSatisfy { $0["app"] as? String == "test-app" })
        func about(_ user: String) -> [String] {
            taken.filter { [$0["user"], $0["owner"], $0["from"]].contains { $0 as? String == user } }.map { "\($0["type"]!)" }
        }
        #expect(
            about("alice") == [
                "user.online", "channel.joined", "presence.state_changed", "metadata.changed", "lock.acquired",
                "lock.released", "lock.acquired", "lock.expired", "channel.timeout", "user.offline",
            ])
        #expect(about("bob") == ["user.online", "channel.joined", "lock.acquired", "lock.revoked", "message.offline", "channel.left", "user.offline"])
        #expect(about("dave") == ["user.online", "user.offline"])
        let offline = try #require(taken.last { $0["type"] as? String == "user.offline" && $0["user"] as? String == "dave" })
        #expect(offline["reason"] as? String == "kicked")
        let message = try #require(taken.first { $0["type"] as? String == "message.offline" })
        #expect(message["to"] as? String == "carol" && message["payload"] as? String == "are you there?")
        let expired = try #require(taken.first { $0["type"] as? String == "lock.expired" })
        #expect(expired["owner"] as? String == "alice" && expired["lock"] as? String == "L")
        #expect(taken.filter { $0["type"] as? String == "channel.occupied" }.count == 1)
        #expect(taken.last { $0["channel"] as? String == "room" }?["type"] as? String == "channel.vacated")
        await server.shutdown()
        try await receiver.stop()
    }

    @Test func aThousandWaitingDeliveriesSurviveKill9AndAllArriveAfterTheRestart() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiverPort = try RedisServer.freePort()
        let admin = try RedisServer.freePort()
        let secretFile = folder.appendingPathComponent("webhook.secret")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data((Self.secret + "\n").utf8).write(to: secretFile)
        let data = folder.appendingPathComponent("data")
        let options = [
            "--webhook-url", "http://127.0.0.1:\(receiverPort)/hooks", "--webhook-secret-file", secretFile.path,
            "--admin-listen", "127.0.0.1:\(admin)",
        ]
        // Nobody listens at the receiver's port yet: every attempt is refused and waits its backoff.
        let first = try await ServeProcess.start(dataDirectory: data, options)
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let alice = try await RawClient.connect(to: first.url, group: group)
        #expect(await alice.login("alice")?.loginAccepted != nil)
        for id in UInt32(2)..<1002 {
            alice.send(.publish(id: id, channelType: .user, channel: "bob", message: .string("message \(id - 1)")))
        }
        #expect(await alice.answer(to: 1001)?.errorCode == .channelReceiverOffline)
        #expect(await eventuallyAsync { (try? await MetricsScrapeTests.scrape(admin))?["switchboard_webhook_queued"] == 1001 })
        try await first.kill9()

        let receiver = try await WebhookReceiver.start(in: folder, secret: Self.secret, ["--port", "\(receiverPort)"])
        let second = try await ServeProcess.start(dataDirectory: data, options)
        #expect(await eventually(within: .seconds(60)) { receiver.taken.count >= 1001 })
        let taken = receiver.taken
        #expect(taken.first?["type"] as? String == "user.online")
        let payloads = taken.filter { $0["type"] as? String == "message.offline" }.compactMap { $0["payload"] as? String }
        #expect(payloads == (1...1000).map { "message \($0)" }, "all 1,000, in order")
        #expect(receiver.requests.allSatisfy { $0["verified"] as? Bool == true })
        try await second.stop()
        try await receiver.stop()
    }

    @Test func sighupSwapsTheReceiversAndSecretAndGivesUpWhatWaitedForTheOldOne() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try await WebhookReceiver.start(in: folder.appendingPathComponent("first"), secret: Self.secret)
        let second = try await WebhookReceiver.start(in: folder.appendingPathComponent("second"), secret: "another-secret")
        let admin = try RedisServer.freePort()
        let file = folder.appendingPathComponent("switchboard.json").path
        try """
            {"logFormat": "json", "webhookUrls": ["\(first.url)"], "webhookSecretFile": "\(first.secretFile.path)",
             "apps": {"test-app": {}}}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let serve = try await ServeProcess.start(
            dataDirectory: folder.appendingPathComponent("data"), ["--config", file, "--admin-listen", "127.0.0.1:\(admin)"], logLevel: nil)
        defer { kill(serve.process.processIdentifier, SIGKILL) }
        let log = serve.errors.fileHandleForReading
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        /// A user logged in, staying online (the client is kept) until the test ends.
        func online(_ user: String) async throws -> RawClient {
            let client = try await RawClient.connect(to: serve.url, group: group)
            #expect(await client.login(user)?.loginAccepted != nil)
            return client
        }
        func onlineUsers(_ receiver: WebhookReceiver) -> [String] {
            receiver.taken.filter { $0["type"] as? String == "user.online" }.compactMap { $0["user"] as? String }
        }
        let alice = try await online("alice")
        #expect(await eventually { onlineUsers(first) == ["alice"] })
        // The server has read the receiver's answer too (the receiver records a delivery before it
        // answers: stopped in between, alice's would wait as well and be given up with bob's).
        #expect(await eventuallyAsync { ((try? await MetricsScrapeTests.scrape(admin))?["switchboard_webhook_sent_total"] ?? 0) >= 1 })

        // The first receiver goes away; bob's event waits for it (its attempt failed).
        try await first.stop()
        let bob = try await online("bob")
        #expect(await eventuallyAsync { ((try? await MetricsScrapeTests.scrape(admin))?["switchboard_webhook_failed_attempts_total"] ?? 0) >= 1 })

        // The file now names only the app's own receiver, with its own secret file.
        try """
            {"logFormat": "json", "webhookSecretFile": "\(second.secretFile.path)",
             "apps": {"test-app": {"webhookUrls": ["\(second.url)"]}}}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        let perApp = try await CommandLineProcessTests.readLogLine(log) { $0["message"]?.hasPrefix("reload: apps.test-app.webhookUrls") == true }
        #expect(perApp["message"] == "reload: apps.test-app.webhookUrls - → \(second.url)")
        let swapped = try await CommandLineProcessTests.readLogLine(log) { $0["message"]?.hasPrefix("reload: webhooks:") == true }
        #expect(swapped["message"] == "reload: webhooks: 1 receivers in force, 1 waiting deliveries to receivers no longer configured given up")

        let carol = try await online("carol")
        #expect(await eventually { onlineUsers(second) == ["carol"] }, "\(second.requests)")
        #expect(second.requests.allSatisfy { $0["verified"] as? Bool == true }, "signed with the new secret")
        let counts = try await MetricsScrapeTests.scrape(admin)
        #expect(counts["switchboard_webhook_dropped_total"] == 1 && counts["switchboard_webhook_queued"] == 0)
        withExtendedLifetime((alice, bob, carol)) {}
        try await serve.stop()
        try await second.stop()
    }

    @Test func aReceiverThatNeverAnswersLeavesTheMessagePathAlone() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let blackhole = try await WebhookReceiver.start(in: folder, secret: Self.secret, ["--mode", "blackhole"])
        let (server, admin) = try await startWithAdmin { configuration in
            var webhooks = WebhookConfiguration(targets: [WebhookTarget(url: blackhole.url)], secret: Array(Self.secret.utf8))
            webhooks.attemptTimeout = .milliseconds(300)
            configuration.webhooks = webhooks
            configuration.webhookQueue = .memory
            configuration.limits = .withoutRateLimits
            configuration.maxFramesPerSecond = nil
        }
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let alice = try await RawClient.connect(to: server.url, group: group)
        #expect(await alice.login("alice")?.loginAccepted != nil)
        let bob = try await RawClient.connect(to: server.url, group: group)
        #expect(await bob.login("bob")?.loginAccepted != nil)
        for id in UInt32(2)..<202 { alice.send(.publish(id: id, channelType: .user, channel: "bob", message: .string("\(id)"))) }
        #expect(await alice.answer(to: 201)?.errorCode == nil, "every message is answered while the receiver hangs")
        #expect(await bob.waitFor { $0.received.count >= 201 ? true : nil } == true)
        let samples = try await MetricsScrapeTests.scrape(admin)
        #expect(samples["switchboard_webhook_enqueued_total"] == 2 && samples["switchboard_webhook_sent_total"] == 0)
        #expect(await eventuallyAsync { ((try? await MetricsScrapeTests.scrape(admin))?["switchboard_webhook_failed_attempts_total"] ?? 0) >= 1 })
        if let promtool = MetricsScrapeTests.promtool {
            let file = folder.appendingPathComponent("metrics.txt")
            _ = try await adminProbe(["save-metrics", "\(admin)", file.path])
            let check = try await ProcessRunner.run("/bin/sh", ["-c", "\(promtool) check metrics < '\(file.path)'"])
            #expect(check.status == 0 && !check.text.contains("error"), "\(check.text)")
        }
        await server.shutdown()
        try await blackhole.stop()
    }
}
