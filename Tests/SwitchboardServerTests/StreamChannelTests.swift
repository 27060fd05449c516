import Foundation
import Synchronization
import Testing
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// Stream channels end to end: a real server on 127.0.0.1 and raw protocol clients.
@Suite(.timeLimit(.minutes(5))) struct StreamChannelTests {
    /// A logged-in raw client with its own request ids.
    final class Peer: Sendable {
        let client: RawClient
        let user: String
        private let ids = Counter()

        init(_ user: String, app: String = "test-app", server: SwitchboardServer, group: EventLoopGroup) async throws {
            client = try await RawClient.connect(to: server.url, group: group)
            self.user = user
            _ = await client.login(user, id: 1, appId: app)
        }

        /// Sends one stream operation and waits for its answer.
        @discardableResult
        func call(_ operation: StreamOperation) async -> ServerFrame? {
            let id = ids.next()
            client.send(.stream(id: id, operation))
            return await client.answer(to: id)
        }

        /// The message pushes received so far.
        var messages: [MessageDelivery] { client.received.compactMap(\.deliveredMessage) }
        /// The topic events received so far.
        var topicEvents: [TopicEvent] { client.received.compactMap(\.topicEvent) }

        /// Waits until `count` messages have arrived.
        func messages(count: Int) async -> [MessageDelivery] {
            await client.waitFor { $0.received.compactMap(\.deliveredMessage).count >= count ? () : nil }
            return messages
        }

        /// Waits until `count` topic events have arrived.
        func topicEvents(count: Int) async -> [TopicEvent] {
            await client.waitFor { $0.received.compactMap(\.topicEvent).count >= count ? () : nil }
            return topicEvents
        }
    }

    final class Counter: Sendable {
        private let value = Mutex<UInt32>(1)
        func next() -> UInt32 { value.withLock { $0 += 1; return $0 } }
    }

    @Test func joinTopicsSubscribePublishAndLeave() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let alice = try await Peer("alice", server: server, group: group)
        let bob = try await Peer("bob", server: server, group: group)

        #expect(await alice.call(.join(channel: "live", token: "", features: [.presence])) == .ok(id: 2))
        #expect(await alice.call(.joinTopic(channel: "live", topic: "video", options: TopicJoinOptions(qos: .ordered, meta: "cam"))) == .ok(id: 3))
        #expect(await bob.call(.join(channel: "live", token: "", features: [.presence])) == .ok(id: 2))
        let snapshot = await bob.topicEvents(count: 1).first
        #expect(snapshot?.type == .snapshot)
        #expect(snapshot?.topicInfos == [TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "cam")])])

        let answer = await bob.call(.subscribeTopic(channel: "live", topic: "video", users: ["alice", ""]))
        #expect(answer?.topicSubscription == TopicSubscription(succeedUsers: ["alice"], failedUsers: [""]))
        for index in 0..<20 {
            let reply = await alice.call(.publishTopicMessage(
                channel: "live", topic: "video", message: index.isMultiple(of: 2) ? .string("m\(index)") : .binary([UInt8(index)]),
                customType: "frame", sendTs: 0))
            #expect(reply?.requestId != nil && reply?.errorCode == nil)
        }
        let got = await bob.messages(count: 20)
        #expect(got.count == 20)
        #expect(got.map(\.payload) == (0..<20).map { $0.isMultiple(of: 2) ? .string("m\($0)") : .binary([UInt8($0)]) })
        #expect(got.allSatisfy { $0.channelType == .stream && $0.channelName == "live" && $0.channelTopic == "video" && $0.publisher == "alice" && $0.customType == "frame" })
        #expect(alice.messages.isEmpty)

        #expect(await bob.call(.joinTopic(channel: "live", topic: "chat", options: TopicJoinOptions())) != nil)
        let joinEvent = await alice.topicEvents(count: 2).last
        #expect(joinEvent?.type == .remoteJoinTopic)
        #expect(joinEvent?.publisher == "bob")
        #expect(await bob.call(.leaveTopic(channel: "live", topic: "chat")).isSuccess)
        #expect(await alice.topicEvents(count: 3).last?.type == .remoteLeaveTopic)

        #expect(await bob.call(.unsubscribeTopic(channel: "live", topic: "video", users: nil)).isSuccess)
        _ = await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string("unheard"), customType: "", sendTs: 0))
        #expect(await alice.call(.leave(channel: "live")).isSuccess)
        let leaveEvent = await bob.topicEvents(count: 2).last
        #expect(leaveEvent?.type == .remoteLeaveTopic)
        #expect(leaveEvent?.publisher == "alice")
        #expect(bob.messages.count == 20)
        #expect(await bob.call(.renewChannelToken(channel: "live", token: "anything")) == .ok(id: 7))
        await server.shutdown()
        group.shutdown()
    }

    @Test func refusalsCarryTheReferenceCodes() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let alice = try await Peer("alice", server: server, group: group)
        #expect(await alice.call(.joinTopic(channel: "live", topic: "video", options: TopicJoinOptions()))?.errorCode == .channelNotJoined)
        _ = await alice.call(.join(channel: "live", token: "", features: []))
        #expect(await alice.call(.join(channel: "live", token: "", features: []))?.errorCode == .duplicateOperation)
        #expect(await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string("x"), customType: "", sendTs: 0))?.errorCode == .channelTopicNotJoined)
        #expect(await alice.call(.joinTopic(channel: "live", topic: String(repeating: "t", count: 17), options: TopicJoinOptions()))?.errorCode == .channelInvalidTopicName)
        #expect(await alice.call(.joinTopic(channel: "live", topic: "t", options: TopicJoinOptions(meta: String(repeating: "m", count: 257))))?.errorCode == .channelInvalidTopicMeta)
        _ = await alice.call(.joinTopic(channel: "live", topic: "video", options: TopicJoinOptions()))
        #expect(await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .binary(Array(repeating: 1, count: 1025)), customType: "", sendTs: 0))?.errorCode == .channelMessageLengthExceedLimitation)
        #expect(await alice.call(.unsubscribeTopic(channel: "live", topic: "video", users: nil))?.errorCode == .channelTopicNotSubscribed)
        #expect(await alice.call(.leave(channel: "elsewhere"))?.errorCode == .channelNotJoined)
        #expect(await alice.call(.join(channel: "", token: "", features: []))?.errorCode == .invalidChannelName)
        await server.shutdown()
        group.shutdown()
    }

    @Test func twoAppsWithTheSameUsersAndChannelsNeverMeet() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        var peers: [String: (alice: Peer, bob: Peer)] = [:]
        for app in ["app-one", "app-two"] {
            let alice = try await Peer("alice", app: app, server: server, group: group)
            let bob = try await Peer("bob", app: app, server: server, group: group)
            _ = await alice.call(.join(channel: "live", token: "", features: [.presence]))
            _ = await bob.call(.join(channel: "live", token: "", features: [.presence]))
            _ = await alice.call(.joinTopic(channel: "live", topic: "video", options: TopicJoinOptions(meta: app)))
            peers[app] = (alice, bob)
        }
        for app in ["app-one", "app-two"] {
            let (alice, bob) = peers[app]!
            let answer = await bob.call(.subscribeTopic(channel: "live", topic: "video", users: nil))
            #expect(answer?.topicSubscription?.succeedUsers == ["alice"])
            _ = await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string(app), customType: "", sendTs: 0))
        }
        for app in ["app-one", "app-two"] {
            let (alice, bob) = peers[app]!
            #expect(await bob.messages(count: 1).map(\.payload) == [.string(app)])
            // Bob's only remote join event is his own app's alice, with her own app's meta.
            let metas = await bob.topicEvents(count: 2).flatMap { $0.topicInfos.flatMap { $0.publishers.map(\.meta) } }
            #expect(Set(metas) == [app])
            #expect(alice.messages.isEmpty)
        }
        // A second message of each app's own alice comes after anything from the other app.
        for app in ["app-one", "app-two"] {
            _ = await peers[app]!.alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string(app + " again"), customType: "", sendTs: 0))
        }
        for app in ["app-one", "app-two"] {
            #expect(await peers[app]!.bob.messages(count: 2).map(\.payload) == [.string(app), .string(app + " again")])
        }
        await server.shutdown()
        group.shutdown()
    }

    @Test func theServerBusHearsStreamJoinsAndLeavesWithTheirFeatures() async throws {
        let server = try await TestServer.start()
        let recorder = EventRecorder()
        recorder.record(ChannelJoined.self, on: server.bus)
        recorder.record(ChannelLeft.self, on: server.bus)
        let group = try EventLoopGroup(threads: 1)
        let alice = try await Peer("alice", server: server, group: group)
        let bob = try await Peer("bob", server: server, group: group)
        _ = await alice.call(.join(channel: "live", token: "", features: [.presence, .metadata]))
        _ = await bob.call(.join(channel: "live", token: "", features: [.lock]))
        _ = await alice.call(.joinTopic(channel: "live", topic: "video", options: TopicJoinOptions()))
        alice.client.send(.logout(id: 99))
        _ = await alice.client.answer(to: 99)
        let joined = await recorder.waitFor(ChannelJoined.self, count: 2)
        #expect(joined.map(\.features) == [[.presence, .metadata], [.lock]])
        #expect(joined.allSatisfy { $0.channel.type == .stream && $0.channel.name == "live" && $0.channel.app == "test-app" })
        let left = await recorder.waitFor(ChannelLeft.self)
        #expect(left.first?.caller.userId == "alice")
        #expect(left.first?.reason == .sessionClosed(.logout))
        // bob's snapshot at his join (empty), alice's topic, and its end with her session. The bus
        // hears ChannelLeft before bob's socket brings the last push, so wait for all three.
        #expect(await bob.topicEvents(count: 3).map(\.type) == [.snapshot, .remoteJoinTopic, .remoteLeaveTopic])
        await server.shutdown()
        group.shutdown()
    }

    @Test func aCutConnectionResumesWithItsStreamChannelAndMissesNothing() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let alice = try await Peer("alice", server: server, group: group)
        let bobClient = try await RawClient.connect(to: server.url, group: group)
        guard let grant = await bobClient.login("bob")?.loginAccepted else {
            Issue.record("bob logs in")
            return
        }
        _ = await alice.call(.join(channel: "live", token: "", features: []))
        _ = await alice.call(.joinTopic(channel: "live", topic: "video", options: TopicJoinOptions(qos: .ordered)))
        bobClient.send(.stream(id: 2, .join(channel: "live", token: "", features: [])))
        _ = await bobClient.answer(to: 2)
        bobClient.send(.stream(id: 3, .subscribeTopic(channel: "live", topic: "video", users: ["alice"])))
        _ = await bobClient.answer(to: 3)
        _ = await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string("before"), customType: "", sendTs: 0))
        _ = await bobClient.waitFor { $0.received.contains { $0.deliveredMessage != nil } ? () : nil }
        let receivedBefore = UInt64(bobClient.received.filter { if case .push = $0 { true } else { false } }.count)
        bobClient.connection.close()
        _ = await bobClient.waitFor { $0.closeCode }

        for index in 0..<5 {
            _ = await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string("away \(index)"), customType: "", sendTs: 0))
        }
        let resumed = try await RawClient.connect(to: server.url, group: group)
        resumed.send(.login(id: 1, Login(
            appId: "test-app", userId: "bob", token: "", heartbeatInterval: 5, presenceTimeout: 30,
            resume: ResumeTicket(session: grant.session, secret: grant.ticket.secret, received: receivedBefore))))
        #expect(await resumed.answer(to: 1)?.loginAccepted?.resumed == true)
        _ = await alice.call(.publishTopicMessage(channel: "live", topic: "video", message: .string("after"), customType: "", sendTs: 0))
        let got = await resumed.waitFor { client -> [MessageDelivery]? in
            let messages = client.received.compactMap(\.deliveredMessage)
            return messages.count >= 6 ? messages : nil
        }
        #expect(got?.map(\.payload) == (0..<5).map { .string("away \($0)") } + [.string("after")])
        await server.shutdown()
        group.shutdown()
    }

    @Test func withAnAppCertificateTheJoinTakesOnlyAnRtcTokenForTheChannel() async throws {
        let appId = "970CA35de60c44645bbae8a215061b33", certificate = "5CFd2fd1755d40ecb72977518be15d3b"
        // From PyPI's agora-token-builder: channel "live", uid 0 (any user), join never expiring.
        let anyoneInLive =
            "006970CA35de60c44645bbae8a215061b33IABkCT4drKcd6Omy3BszF+sKDaNe8w2LAyC7JLO4E13Sz68sD1MAAAAAEACxy3QAgEJVZQEAAQAAAAAA"
        let server = try await TestServer.start(modules: { $0.extensions.append(Crypto(credentials: [appId: certificate])) })
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        let login = try TokenMinter.mint007(
            appId: appId, appCertificate: certificate, userId: "alice", issuedAt: UInt32(Date().timeIntervalSince1970),
            expireSeconds: 3600, salt: 1)
        #expect(await client.login("alice", token: login, appId: appId)?.loginAccepted != nil)
        client.send(.stream(id: 2, .join(channel: "live", token: login, features: [])))
        #expect(await client.answer(to: 2)?.errorCode == .invalidToken, "a login token is no RTC token")
        client.send(.stream(id: 3, .join(channel: "other", token: anyoneInLive, features: [])))
        #expect(await client.answer(to: 3)?.errorCode == .invalidToken, "a token for another channel")
        client.send(.stream(id: 4, .join(channel: "live", token: anyoneInLive, features: [])))
        #expect(await client.answer(to: 4) == .ok(id: 4))
        client.send(.stream(id: 5, .renewChannelToken(channel: "live", token: "nonsense")))
        #expect(await client.answer(to: 5)?.errorCode == .invalidToken)
        client.send(.stream(id: 6, .renewChannelToken(channel: "live", token: anyoneInLive)))
        #expect(await client.answer(to: 6) == .ok(id: 6))
        await server.shutdown()
        group.shutdown()
    }
}
