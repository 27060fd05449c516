import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting
import SwitchboardTransport
import SwitchboardWire

/// `/metrics` read by Python's http.client against known traffic, and checked by promtool.
@Suite(.timeLimit(.minutes(3))) struct MetricsScrapeTests {
    /// The scrape's samples, "name{labels}" → value.
    static func scrape(_ admin: Int) async throws -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in try await adminProbe(["metrics", "\(admin)"]) where !line.isEmpty {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                Issue.record("not a sample: \(line)")
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test func publishingTenMessagesToThreeSubscribersCountsThirtyDeliveries() async throws {
        let (server, admin) = try await startWithAdmin()
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        var subscribers: [RawClient] = []
        for name in ["a", "b", "c"] {
            let client = try await RawClient.connect(to: server.url, group: group)
            #expect(await client.login(name).isSuccess)
            client.send(.subscribe(id: 2, channel: "room", features: .defaultFeatures))
            #expect(await client.answer(to: 2).isSuccess)
            subscribers.append(client)
        }
        let publisher = try await RawClient.connect(to: server.url, group: group)
        #expect(await publisher.login("publisher").isSuccess)
        let before = try await Self.scrape(admin)
        #expect(before["switchboard_connections_open{state=\"logged_in\"}"] == 4)
        #expect(before["switchboard_sessions{state=\"attached\"}"] == 4)
        #expect(before["switchboard_logins_total"] == 4)

        for id in UInt32(10)..<20 {
            publisher.send(.publish(id: id, channelType: .message, channel: "room", message: .string("m\(id)"), customType: ""))
            #expect(await publisher.answer(to: id).isSuccess)
        }
        for subscriber in subscribers {
            #expect(await eventually { subscriber.received.count { if case .push = $0 { true } else { false } } >= 10 })
        }
        let after = try await Self.scrape(admin)
        let deliveries = "switchboard_deliveries_total{channel_type=\"message\"}"
        let publishes = "switchboard_publishes_total{channel_type=\"message\"}"
        #expect(try #require(after[deliveries]) - (before[deliveries] ?? 0) == 30)
        #expect(try #require(after[publishes]) - (before[publishes] ?? 0) == 10)
        let requests = "switchboard_requests_total{operation=\"publish\",result=\"ok\"}"
        #expect(try #require(after[requests]) - (before[requests] ?? 0) == 10)
        #expect(try #require(after["switchboard_received_bytes_total"]) > before["switchboard_received_bytes_total"] ?? 0)
        #expect(try #require(after["switchboard_sent_bytes_total"]) > before["switchboard_sent_bytes_total"] ?? 0)
        #expect(after["switchboard_request_duration_seconds_count{operation=\"subscribe\"}"] == 3)
        await server.shutdown()
    }

    @Test func aRefusedLoginRaisesTheFailureCounterOfItsCode() async throws {
        let (server, admin) = try await startWithAdmin { $0.appIds = ["test-app"] }
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let failures = "switchboard_login_failures_total{code=\"\(RtmErrorCode.invalidAppId.rawValue)\",error=\"invalidAppId\"}"
        #expect(try await Self.scrape(admin)[failures] == nil)
        let stranger = try await RawClient.connect(to: server.url, group: group)
        #expect(await stranger.login("mallory", appId: "other-app")?.errorCode == .invalidAppId)
        let good = try await RawClient.connect(to: server.url, group: group)
        #expect(await good.login("alice").isSuccess)
        let after = try await Self.scrape(admin)
        #expect(after[failures] == 1)
        #expect(after["switchboard_logins_total"] == 1)
        #expect(after["switchboard_requests_total{operation=\"login\",result=\"error\"}"] == 1)
        await server.shutdown()
    }

    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: promtool != nil, "promtool (Debian package prometheus) is not installed"))
    func promtoolAcceptsTheScrape() async throws {
        let (server, admin) = try await startWithAdmin()
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let client = try await RawClient.connect(to: server.url, group: group)
        #expect(await client.login("alice").isSuccess)
        client.send(.subscribe(id: 2, channel: "room", features: .defaultFeatures))
        #expect(await client.answer(to: 2).isSuccess)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-metrics-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try await adminProbe(["save-metrics", "\(admin)", file.path])
        let check = try await ProcessRunner.run("/bin/sh", ["-c", "\(Self.promtool!) check metrics < '\(file.path)'"])
        #expect(check.status == 0, "\(check.text)")
        #expect(!check.text.contains("error"), "\(check.text)")
        await server.shutdown()
    }
}

/// The modules' own families, read at scrape time against known activity.
extension MetricsScrapeTests {
    @Test func theModulesCountsMatchKnownPresenceMetadataAndLockActivity() async throws {
        let (server, admin) = try await startWithAdmin()
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        var clients: [RawClient] = []
        for (index, name) in ["alice", "bob", "carol"].enumerated() {
            let client = try await RawClient.connect(to: server.url, group: group)
            #expect(await client.login(name).isSuccess)
            let channels: [String] = name == "carol" ? ["lobby"] : ["room", "lobby"]
            for (offset, channel) in channels.enumerated() {
                let id = UInt32(10 + index * 10 + offset)
                client.send(.subscribe(id: id, channel: channel, features: [.message, .presence, .lock]))
                #expect(await client.answer(to: id).isSuccess)
            }
            clients.append(client)
        }
        let (alice, bob) = (clients[0], clients[1])
        alice.send(.lock(id: 40, .setLock(LockAddress(.message, "room", "L"), ttl: nil)))
        alice.send(.lock(id: 41, .setLock(LockAddress(.message, "room", "M"), ttl: nil)))
        alice.send(.lock(id: 42, .acquireLock(LockAddress(.message, "room", "L"), retry: false)))
        for id in UInt32(40)...42 { #expect(await alice.answer(to: id).isSuccess) }
        bob.send(.lock(id: 43, .acquireLock(LockAddress(.message, "room", "L"), retry: true)))
        #expect(await bob.answer(to: 43).isSuccess)
        let items = [MetadataItem(key: "topic", value: "hello")]
        func write(_ id: UInt32, major: Int64) -> ClientFrame {
            .storage(
                id: id,
                .writeChannel(
                    .set, channelType: .message, channel: "room", data: Metadata(majorRevision: major, items: items),
                    options: MetadataOptions(), lock: nil))
        }
        alice.send(write(50, major: -1))
        alice.send(write(51, major: 1))
        alice.send(write(52, major: 1))
        alice.send(.storage(id: 53, .writeUser(.set, userId: "alice", data: Metadata(items: items), options: MetadataOptions())))
        alice.send(.storage(id: 54, .writeUser(.remove, userId: "alice", data: Metadata(), options: MetadataOptions())))
        #expect(await alice.answer(to: 50).isSuccess)
        #expect(await alice.answer(to: 51).isSuccess)
        #expect(await alice.answer(to: 52)?.errorCode == .storageOutdatedRevision)
        #expect(await alice.answer(to: 53).isSuccess)
        #expect(await alice.answer(to: 54).isSuccess)

        let samples = try await Self.scrape(admin)
        #expect(samples["switchboard_presence_channels{channel_type=\"message\"}"] == 2)
        #expect(samples["switchboard_presence_members{channel_type=\"message\"}"] == 5)
        #expect(samples["switchboard_presence_channels{channel_type=\"stream\"}"] == 0)
        #expect(samples["switchboard_locks{state=\"held\"}"] == 1)
        #expect(samples["switchboard_locks{state=\"free\"}"] == 1)
        #expect(samples["switchboard_lock_waiters"] == 1)
        #expect(samples["switchboard_metadata_writes_total{kind=\"set\"}"] == 3)
        #expect(samples["switchboard_metadata_writes_total{kind=\"remove\"}"] == 1)
        #expect(samples["switchboard_metadata_writes_total{kind=\"update\"}"] == 0)
        #expect(samples["switchboard_metadata_revision_conflicts_total"] == 1)
        #expect(samples["switchboard_metadata_commit_duration_seconds_count"] == 5)
        #expect(samples["switchboard_metadata_commit_duration_seconds_bucket{le=\"+Inf\"}"] == 5)

        // bob leaves: one membership less, and the lock's line is empty.
        bob.send(.unsubscribe(id: 60, channel: "room"))
        #expect(await bob.answer(to: 60).isSuccess)
        let after = try await Self.scrape(admin)
        #expect(after["switchboard_presence_members{channel_type=\"message\"}"] == 4)
        #expect(after["switchboard_lock_waiters"] == 0)
        await server.shutdown()
    }
}
