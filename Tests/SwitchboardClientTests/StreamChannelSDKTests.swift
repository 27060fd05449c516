import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
@testable import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

extension EventLog {
    var topicEvents: [RtmTopicEvent] {
        all.compactMap { if case .topic(let event) = $0 { event } else { nil } }
    }

    /// The link-state events of the stream service.
    var streamLinkStates: [RtmLinkStateEvent] { linkStates.filter { $0.serviceType == .stream } }
}

/// The completion form of a subscribeTopic call, as an async result.
func subscribeWithBlock(_ channel: RtmStreamChannel, _ topic: String, users: [String]?) async
    -> (RtmTopicSubscriptionResponse?, RtmErrorInfo?)
{
    let option = RtmTopicOption()
    option.users = users
    return await withCheckedContinuation { continuation in
        channel.subscribeTopic(topic, option: option) { response, error in continuation.resume(returning: (response, error)) }
    }
}

/// Stream channels through the SDK against a real server: every call in both forms, every topic
/// event, the stream service's link events, and a lost connection resumed or rebuilt.
@Suite(.timeLimit(.minutes(5))) struct StreamChannelSDKTests {
    func joinOption(token: String? = nil, features: RtmJoinChannelFeature = [.presence]) -> RtmJoinChannelOption {
        let option = RtmJoinChannelOption()
        option.token = token
        option.features = features
        return option
    }

    func topicOption(meta: String? = nil, qos: RtmMessageQos = .unordered) -> RtmJoinTopicOption {
        let option = RtmJoinTopicOption()
        option.meta = meta
        option.qos = qos
        return option
    }

    @Test func everyCallAndTopicEventEndToEnd() async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        let aliceLive = try alice.createStreamChannel("live")
        let bobLive = try bob.createStreamChannel("live")
        #expect(aliceLive.getChannelName() == "live")

        expectOK(await aliceLive.join(joinOption()))
        expectOK(await aliceLive.joinTopic("video", option: topicOption(meta: "cam", qos: .ordered)))
        let joined = await withCheckedContinuation { continuation in
            bobLive.join(joinOption()) { response, error in continuation.resume(returning: (response, error)) }
        }
        expectOK(joined)
        #expect(await bobLog.wait { $0.topicEvents.count == 1 })
        let snapshot = try #require(bobLog.topicEvents.first)
        #expect(snapshot.type == .snapshot)
        #expect(snapshot.channelName == "live")
        #expect(snapshot.topicInfos.map(\.topic) == ["video"])
        #expect(snapshot.topicInfos.first?.publishers.map(\.publisherUserId) == ["alice"])
        #expect(snapshot.topicInfos.first?.publishers.map(\.publisherMeta) == ["cam"])

        let subscribed = await subscribeWithBlock(bobLive, "video", users: ["alice", ""])
        #expect(subscribed.0?.succeedUsers == ["alice"])
        #expect(subscribed.0?.failedUsers == [""])
        // A list that names nobody is refused whole (seed 000, -11011).
        #expect(await subscribeWithBlock(bobLive, "video", users: []).1?.errorCode == .channelInvalidUserList)
        #expect(await subscribeWithBlock(bobLive, "video", users: ["", " \u{7}"]).1?.errorCode == .channelInvalidUserList)
        let nobody = RtmTopicOption()
        nobody.users = []
        expectError(.channelInvalidUserList, await bobLive.unsubscribeTopic("video", option: nobody))
        let options = RtmTopicMessageOptions()
        options.customType = "frame"
        for index in 0..<10 {
            expectOK(await aliceLive.publishTopicMessage(topic: "video", message: "m\(index)", option: options))
        }
        expectOK(await aliceLive.publishTopicMessage(topic: "video", data: Data([1, 2, 3]), option: nil))
        #expect(await bobLog.wait { $0.messages.count == 11 })
        let got = bobLog.messages
        #expect(got.prefix(10).compactMap(\.message.stringData) == (0..<10).map { "m\($0)" })
        #expect(got.last?.message.rawData == Data([1, 2, 3]))
        #expect(got.allSatisfy { $0.channelType == .stream && $0.channelName == "live" && $0.channelTopic == "video" && $0.publisher == "alice" })
        #expect(got.first?.customType == "frame")

        expectOK(await bobLive.joinTopic("chat", option: nil))
        #expect(await aliceLog.wait { $0.topicEvents.contains { $0.type == .remoteJoinTopic && $0.publisher == "bob" } })
        expectOK(await bobLive.leaveTopic("chat"))
        #expect(await aliceLog.wait { $0.topicEvents.contains { $0.type == .remoteLeaveTopic && $0.publisher == "bob" } })
        expectError(.channelTopicNotJoined, await bobLive.publishTopicMessage(topic: "chat", message: "x", option: nil))

        let unsubscribe = RtmTopicOption()
        unsubscribe.users = ["alice"]
        expectOK(await bobLive.unsubscribeTopic("video", option: unsubscribe))
        expectOK(await aliceLive.publishTopicMessage(topic: "video", message: "unheard", option: nil))
        expectError(.channelTopicNotSubscribed, await bobLive.unsubscribeTopic("video", option: nil))
        expectOK(await bobLive.renewToken("any token in development mode"))

        // destroy leaves first: bob hears alice leave her topic.
        #expect(aliceLive.destroy() == .ok)
        #expect(await bobLog.wait { $0.topicEvents.contains { $0.type == .remoteLeaveTopic && $0.publisher == "alice" } })
        expectError(.instanceAlreadyReleased, await aliceLive.join(joinOption()))
        let again = try alice.createStreamChannel("live")
        expectOK(await again.join(joinOption()))
        expectOK(await bobLive.leave())
        expectError(.channelNotJoined, await bobLive.leave())
        #expect(bobLog.messages.count == 11)
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func instancesAndNamesAreCheckedAtCreation() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server)
        let first = try alice.createStreamChannel("live")
        #expect(throws: RtmErrorInfo.self) { _ = try alice.createStreamChannel("live") }
        do {
            _ = try alice.createStreamChannel("")
            Issue.record("an empty name is refused")
        } catch let error as RtmErrorInfo {
            #expect(error.errorCode == .invalidChannelName)
        }
        first.destroy()
        _ = try alice.createStreamChannel("live")
        expectError(.notLogin, try await alice.createStreamChannel("other").join(joinOption()))
        alice.destroy()
        await server.shutdown()
    }

    @Test func joinAndLeaveReportTheStreamServicesLinkEvents() async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        let live = try alice.createStreamChannel("live")
        expectOK(await live.join(joinOption()))
        expectOK(await live.leave())
        #expect(await aliceLog.wait { $0.streamLinkStates.count == 3 })
        let states = aliceLog.streamLinkStates
        #expect(states.map(\.currentState) == [.connecting, .connected, .idle])
        #expect(states.map(\.operation) == [.join, .join, .leave])
        #expect(states.map(\.reasonCode) == [.join, .joinSuccess, .leave])
        #expect(states.allSatisfy { $0.affectedChannels == ["live"] })
        #expect(aliceLog.linkStates.filter { $0.serviceType == .message }.allSatisfy { !$0.affectedChannels.contains("live") })
        expectError(.channelNotJoined, await live.leave())
        alice.destroy()
        await server.shutdown()
    }

    @Test func aSecondJoinBeforeTheFirstsAnswerCancelsTheFirst() async throws {
        // Seed 000, -11034: a join called again before its result cancels the earlier call, and
        // the SDK carries out the later one.
        let gate = HoldingGate()
        let server = try await TestServer.start(modules: { $0.extensions.append(gate) })
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        let aliceLive = try alice.createStreamChannel("live")
        expectOK(await aliceLive.join(joinOption(features: [.presence])))
        let live = try bob.createStreamChannel("live")
        let first = OneShotBox<RtmErrorInfo?>(), second = OneShotBox<RtmErrorInfo?>(), third = OneShotBox<RtmErrorInfo?>()
        // Both joins leave before either is answered: they wait behind a held call.
        bob.callExtension("hold", body: "", completion: nil)
        live.join(joinOption(token: "first", features: [])) { _, error in first.set(error) }
        live.join(joinOption(token: "second", features: [.presence])) { _, error in second.set(error) }
        #expect(await first.value()??.errorCode == .channelJoinCanceled, "canceled at once, before any answer")
        #expect(await eventually { gate.held == 1 })
        gate.open()
        #expect(await second.value() == .some(nil))
        // The later join's features hold: bob joined with presence, so alice saw him come.
        #expect(await aliceLog.wait { $0.presence.contains { $0.type == .remoteJoinChannel && $0.publisher == "bob" } })
        let (members, _) = try await #require(alice.getPresence()).whoNow(channelName: "live", channelType: .stream, options: nil)
        #expect(members?.userStateList.map(\.userId).sorted() == ["alice", "bob"])
        let streamStates = bobLog.streamLinkStates
        #expect(streamStates.map(\.currentState) == [.connecting, .connected], "one join reported, the one that holds")
        // The same twice: the earlier call is canceled, the later one finds the channel joined.
        expectOK(await live.leave())
        bob.callExtension("hold", body: "", completion: nil)
        let fourth = OneShotBox<RtmErrorInfo?>()
        live.join(joinOption(features: [.presence])) { _, error in third.set(error) }
        live.join(joinOption(features: [.presence])) { _, error in fourth.set(error) }
        #expect(await third.value()??.errorCode == .channelJoinCanceled)
        #expect(await fourth.value() == .some(nil))
        expectOK(await live.leave())
        expectError(.channelNotJoined, await live.leave())
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func failedAndLogoutReachBothServicesNamingTheirChannels() async throws {
        // Seed 004: a link-state event names the service whose state changed and the channels
        // it affects; a logout ends both services, and so does a failure.
        let server = try await TestServer.start()
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        let live = try bob.createStreamChannel("live")
        expectOK(await live.join(joinOption()))
        expectOK(await bob.logout())
        #expect(await bobLog.wait { $0.linkStates.filter { $0.currentState == .idle }.count == 2 })
        let loggedOut = bobLog.linkStates.filter { $0.currentState == .idle && $0.operation == .logout }
        #expect(loggedOut.map(\.serviceType) == [.message, .stream])
        #expect(loggedOut.map(\.affectedChannels) == [["room"], ["live"]])

        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        let again = try bob.createStreamChannel("stage")
        expectOK(await again.join(joinOption()))
        let (twin, _) = try makeClient("bob", server: server)
        expectOK(await twin.login(""))
        #expect(await bobLog.wait { $0.linkStates.filter { $0.currentState == .failed }.count == 2 })
        let failed = bobLog.linkStates.filter { $0.currentState == .failed }
        #expect(failed.map(\.serviceType) == [.message, .stream])
        #expect(failed.map(\.affectedChannels) == [["room"], ["stage"]])
        #expect(failed.allSatisfy { $0.reasonCode == .sameUidLogin && $0.previousState == .connected })
        twin.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aCutStreamConnectionResumesAndMissesNoTopicMessage() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server)
        let bobClock = ManualClock()
        let (bob, bobLog) = try makeClient("bob", server: server, clock: bobClock)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        let aliceLive = try alice.createStreamChannel("live"), bobLive = try bob.createStreamChannel("live")
        expectOK(await aliceLive.join(joinOption()))
        expectOK(await aliceLive.joinTopic("video", option: topicOption(qos: .ordered)))
        expectOK(await bobLive.join(joinOption()))
        _ = await bobLive.subscribeTopic("video", option: nil)
        server.dropConnections(ofUser: "bob")
        #expect(await bobLog.wait { $0.streamLinkStates.last?.currentState == .disconnected })
        for index in 0..<20 { expectOK(await aliceLive.publishTopicMessage(topic: "video", message: "\(index)", option: nil)) }
        #expect(await bobClock.waitForSleepers())
        bobClock.advance(by: .seconds(1))
        #expect(await bobLog.wait { $0.streamLinkStates.last?.currentState == .connected })
        let back = try #require(bobLog.streamLinkStates.last)
        #expect(back.isResumed)
        #expect(back.affectedChannels == ["live"])
        #expect(back.operation == .reconnected)
        let lost = try #require(bobLog.streamLinkStates.first { $0.currentState == .disconnected })
        #expect(lost.affectedChannels == ["live"])
        #expect(await bobLog.wait { $0.messages.count == 20 })
        #expect(bobLog.messages.compactMap(\.message.stringData) == (0..<20).map { "\($0)" })
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aLostSessionRejoinsTheChannelItsTopicsAndSubscriptions() async throws {
        // A server restart loses every session: the SDK joins again, rejoins its topics and
        // subscribes again to the publishers it had, before its publishers are back.
        var server = try await TestServer.start()
        let port = try #require(server.port)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        let bobLive = try bob.createStreamChannel("live")
        expectOK(await bobLive.join(joinOption()))
        expectOK(await bobLive.joinTopic("chat", option: topicOption(meta: "bob's")))
        let (carol, _) = try makeClient("carol", server: server)
        expectOK(await carol.login(""))
        let carolLive = try carol.createStreamChannel("live")
        expectOK(await carolLive.join(joinOption()))
        expectOK(await carolLive.joinTopic("video", option: nil))
        #expect(await bobLive.subscribeTopic("video", option: nil).0?.succeedUsers == ["carol"])
        carol.destroy()
        await server.shutdown()
        #expect(await bobLog.wait { $0.streamLinkStates.last?.currentState == .disconnected })

        server = try await TestServer.start(configure: { $0.port = port })
        #expect(await bobLog.wait { $0.streamLinkStates.last?.currentState == .connected })
        let back = try #require(bobLog.streamLinkStates.last)
        #expect(!back.isResumed)
        #expect(back.unrestoredChannels.isEmpty)
        #expect(back.affectedChannels == ["live"])

        let (alice, aliceLog) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        let aliceLive = try alice.createStreamChannel("live")
        expectOK(await aliceLive.join(joinOption()))
        #expect(await aliceLog.wait { $0.topicEvents.first?.type == .snapshot })
        #expect(aliceLog.topicEvents.first?.topicInfos.map(\.topic) == ["chat"], "bob's topic is back")
        let (carol2, _) = try makeClient("carol", server: server)
        expectOK(await carol2.login(""))
        let carolAgain = try carol2.createStreamChannel("live")
        expectOK(await carolAgain.join(joinOption()))
        expectOK(await carolAgain.joinTopic("video", option: nil))
        expectOK(await carolAgain.publishTopicMessage(topic: "video", message: "welcome back", option: nil))
        #expect(await bobLog.wait { $0.messages.last?.message.stringData == "welcome back" })
        alice.destroy()
        carol2.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func twoAppsWithTheSameNamesNeverMeetThroughTheSDK() async throws {
        let server = try await TestServer.start()
        var logs: [String: EventLog] = [:]
        var clients: [RtmClientKit] = []
        var publishers: [String: RtmStreamChannel] = [:]
        for app in ["app-one", "app-two"] {
            let (alice, _) = try makeClient("alice", server: server) { $0.appId = app }
            let (bob, bobLog) = try makeClient("bob", server: server) { $0.appId = app }
            clients += [alice, bob]
            expectOK(await alice.login(""))
            expectOK(await bob.login(""))
            let aliceLive = try alice.createStreamChannel("live"), bobLive = try bob.createStreamChannel("live")
            expectOK(await aliceLive.join(joinOption()))
            expectOK(await aliceLive.joinTopic("video", option: topicOption(meta: app)))
            expectOK(await bobLive.join(joinOption()))
            _ = await bobLive.subscribeTopic("video", option: nil)
            logs[app] = bobLog
            publishers[app] = aliceLive
        }
        for app in ["app-one", "app-two"] {
            expectOK(await publishers[app]!.publishTopicMessage(topic: "video", message: app, option: nil))
        }
        for app in ["app-one", "app-two"] {
            let log = try #require(logs[app])
            #expect(await log.wait { $0.messages.count == 1 })
            #expect(log.messages.map(\.message.stringData) == [app])
            #expect(log.topicEvents.flatMap { $0.topicInfos.flatMap { $0.publishers.map(\.publisherMeta) } } == [app])
        }
        for client in clients { client.destroy() }
        await server.shutdown()
    }
}
