import Testing
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardTopicRouter

/// The topic router alone on a bus: channels, topics, subscriptions, delivery and its limits.
@Suite(.timeLimit(.minutes(2))) struct TopicRouterTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))

    /// A topic router over an in-memory store, or (`suspendingStore`) over one that suspends on
    /// every call.
    func world(limits: Limits = Limits(), suspendingStore: Bool = false) async -> ModuleHarness {
        let router = suspendingStore ? TopicRouter(store: SuspendingTopicStore()) : TopicRouter()
        let harness = await ModuleHarness(limits: limits, modules: [router])
        harness.recorder.record(ChannelJoined.self, on: harness.bus)
        harness.recorder.record(ChannelLeft.self, on: harness.bus)
        return harness
    }

    func topicEvents(_ harness: ModuleHarness, to caller: Caller) -> [TopicEvent] {
        harness.outbox.pushes(to: caller.session).compactMap { if case .topic(let event) = $0 { event } else { nil } }
    }

    func join(_ harness: ModuleHarness, _ callers: Caller..., channel: String = "live") async throws {
        for caller in callers { _ = try await harness.bus.request(JoinStreamChannel(caller: caller, channelName: channel)) }
    }

    func send(_ harness: ModuleHarness, _ caller: Caller, _ text: String, topic: String = "video", channel: String = "live") async throws {
        _ = try await harness.bus.request(
            PublishTopicMessage(caller: caller, channelName: channel, topic: topic, payload: .string(text)))
    }

    @Test(arguments: [false, true]) func aTopicMessageReachesOnlyTheSubscribersOfItsPublisher(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice, bob, carol)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        _ = try await bus.request(JoinTopic(caller: carol, channelName: "live", topic: "video"))
        let answer = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["alice"]))
        #expect(answer == TopicSubscription(succeedUsers: ["alice"], failedUsers: []))
        try await send(harness, alice, "from alice")
        try await send(harness, carol, "from carol")
        let got = harness.outbox.messages(to: bob.session)
        #expect(got.map(\.payload) == [.string("from alice")])
        #expect(got.first?.channelType == .stream)
        #expect(got.first?.channelName == "live")
        #expect(got.first?.channelTopic == "video")
        #expect(got.first?.publisher == "alice")
        #expect(harness.outbox.messages(to: carol.session).isEmpty)
        #expect(harness.outbox.messages(to: alice.session).isEmpty)
        await harness.stop()
    }

    @Test(arguments: [false, true]) func subscribingIsIncrementalAndWithoutUsersTakesTheCurrentPublishers(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice, bob, carol)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        _ = try await bus.request(JoinTopic(caller: carol, channelName: "live", topic: "video"))
        let first = try await bus.request(
            SubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["alice", "", String(repeating: "x", count: 65)]))
        #expect(first == TopicSubscription(succeedUsers: ["alice"], failedUsers: ["", String(repeating: "x", count: 65)]))
        let second = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["alice", "carol"]))
        #expect(second == TopicSubscription(succeedUsers: ["alice", "carol"], failedUsers: []))
        try await send(harness, alice, "a")
        try await send(harness, carol, "c")
        #expect(harness.outbox.messages(to: bob.session).map(\.publisher) == ["alice", "carol"])

        _ = try await bus.request(UnsubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["alice"]))
        try await send(harness, alice, "a2")
        try await send(harness, carol, "c2")
        #expect(harness.outbox.messages(to: bob.session).map(\.publisher) == ["alice", "carol", "carol"])
        _ = try await bus.request(UnsubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        try await send(harness, carol, "c3")
        #expect(harness.outbox.messages(to: bob.session).count == 3)
        await #expect(throws: RtmError.self) {
            _ = try await bus.request(UnsubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        }

        let all = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        #expect(all == TopicSubscription(succeedUsers: ["alice", "carol"], failedUsers: []))
        await harness.stop()
    }

    @Test func withoutUsersTheSubscriptionStopsAtThePublisherLimit() async throws {
        var limits = Limits()
        limits.streams.publishersPerTopicSubscription = 2
        let harness = await world(limits: limits)
        let bus = harness.bus
        try await join(harness, alice, bob, carol)
        let dave = Caller(app: "app", userId: "dave", session: SessionID(4))
        try await join(harness, dave)
        for caller in [alice, carol, dave] { _ = try await bus.request(JoinTopic(caller: caller, channelName: "live", topic: "video")) }
        let answer = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        #expect(answer == TopicSubscription(succeedUsers: ["alice", "carol"], failedUsers: ["dave"]))
        await expectCode(.channelExceedTopicUserLimitation) {
            _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["dave"]))
        }
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aNamedUserIsHeardOnceItStartsPublishing(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, bob)
        let answer = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["alice"]))
        #expect(answer == TopicSubscription(succeedUsers: ["alice"], failedUsers: []))
        try await join(harness, alice, carol)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        _ = try await bus.request(JoinTopic(caller: carol, channelName: "live", topic: "video"))
        try await send(harness, alice, "first")
        try await send(harness, carol, "not asked for")
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("first")])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func orderedTopicsKeepEachPublishersOrder(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice, bob, carol)
        let ordered = TopicJoinOptions(qos: .ordered, priority: .high)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video", options: ordered))
        _ = try await bus.request(JoinTopic(caller: carol, channelName: "live", topic: "video", options: ordered))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        // Two publishers interleave; each one's messages arrive in the order it sent them.
        await withTaskGroup(of: Void.self) { group in
            for caller in [alice, carol] {
                group.addTask {
                    for index in 0..<50 { try? await send(harness, caller, "\(index)") }
                }
            }
        }
        let got = harness.outbox.messages(to: bob.session)
        #expect(got.count == 100)
        let messagePriorities = zip(harness.outbox.pushes(to: bob.session), harness.outbox.priorities(to: bob.session))
            .compactMap { push, priority in if case .message = push { priority } else { nil } }
        #expect(messagePriorities == Array(repeating: .high, count: 100), "the topic's priority goes with each message")
        for publisher in ["alice", "carol"] {
            let sequence = got.filter { $0.publisher == publisher }.map(\.payload)
            #expect(sequence == (0..<50).map { MessagePayload.string("\($0)") })
        }
        await harness.stop()
    }

    @Test(arguments: [false, true]) func topicEventsSnapshotOnJoinThenRemoteJoinAndLeave(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video", options: TopicJoinOptions(meta: "cam")))
        try await join(harness, bob)
        let snapshot = topicEvents(harness, to: bob)
        #expect(snapshot.count == 1)
        #expect(snapshot.first?.type == .snapshot)
        #expect(snapshot.first?.publisher == "bob")
        #expect(snapshot.first?.topicInfos == [TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "cam")])])
        #expect(topicEvents(harness, to: alice).map(\.type) == [.snapshot])

        _ = try await bus.request(JoinTopic(caller: bob, channelName: "live", topic: "audio", options: TopicJoinOptions(meta: "mic")))
        let remoteJoin = topicEvents(harness, to: alice).last
        #expect(remoteJoin?.type == .remoteJoinTopic)
        #expect(remoteJoin?.publisher == "bob")
        #expect(remoteJoin?.topicInfos == [TopicInfo(topic: "audio", publishers: [TopicPublisher(userId: "bob", meta: "mic")])])
        #expect(topicEvents(harness, to: bob).count == 1, "no event about one's own join")

        _ = try await bus.request(LeaveTopic(caller: bob, channelName: "live", topic: "audio"))
        #expect(topicEvents(harness, to: alice).last?.type == .remoteLeaveTopic)
        #expect(topicEvents(harness, to: alice).last?.topicInfos.map(\.topic) == ["audio"])

        _ = try await bus.request(LeaveStreamChannel(caller: alice, channelName: "live"))
        let left = topicEvents(harness, to: bob).last
        #expect(left?.type == .remoteLeaveTopic)
        #expect(left?.publisher == "alice")
        #expect(left?.topicInfos.map(\.topic) == ["video"])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func joinAndLeavePublishChannelEventsWithStreamKeysAndFeatures(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        _ = try await harness.bus.request(JoinStreamChannel(caller: alice, channelName: "live", features: [.presence, .lock, .beQuiet]))
        _ = try await harness.bus.request(LeaveStreamChannel(caller: alice, channelName: "live"))
        let joined = await harness.recorder.waitFor(ChannelJoined.self)
        let left = await harness.recorder.waitFor(ChannelLeft.self)
        #expect(joined == [ChannelJoined(caller: alice, channel: ChannelKey(app: "app", .stream, "live"), features: [.presence, .lock, .beQuiet])])
        #expect(left == [ChannelLeft(caller: alice, channel: ChannelKey(app: "app", .stream, "live"), reason: .left)])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aClosedSessionLeavesEveryChannelAndCannotJoinAgain(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice, bob)
        try await join(harness, alice, channel: "other")
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        await bus.publishAndWait(SessionClosed(caller: alice, reason: .timedOut))
        let left = await harness.recorder.waitFor(ChannelLeft.self, count: 2)
        #expect(Set(left.map(\.channel.name)) == ["live", "other"])
        #expect(left.allSatisfy { $0.reason == .sessionClosed(.timedOut) })
        #expect(topicEvents(harness, to: bob).last?.type == .remoteLeaveTopic)
        await expectCode(.notLogin) {
            _ = try await bus.request(JoinStreamChannel(caller: alice, channelName: "live"))
        }
        // Bob's subscription to alice stays: alice's next session is heard again once she publishes.
        let alice2 = Caller(app: "app", userId: "alice", session: SessionID(9))
        try await join(harness, alice2)
        _ = try await bus.request(JoinTopic(caller: alice2, channelName: "live", topic: "video"))
        try await send(harness, alice2, "back")
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("back")])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aJoinRacingTheEndOfItsSessionLeavesNothingBehind(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        // The session ends while its join waits for the token check.
        bus.handle(VerifyChannelJoinToken.self) { [alice] _ in
            await bus.publishAndWait(SessionClosed(caller: alice, reason: .replacedBySameUser))
            return ChannelJoinGrant(expiresAt: nil)
        }
        await expectCode(.notLogin) { try await join(harness, alice) }
        try await join(harness, bob)
        #expect(topicEvents(harness, to: bob).first?.topicInfos == [])
        _ = try await bus.request(LeaveStreamChannel(caller: bob, channelName: "live"))
        #expect(await harness.recorder.waitFor(ChannelLeft.self).map(\.caller) == [bob])
        #expect(harness.recorder.events(of: ChannelJoined.self).map(\.caller) == [bob], "alice never joined")
        await harness.stop()
    }

    @Test(arguments: [false, true]) func appsNeverShareAStreamChannel(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        let otherBob = Caller(app: "other", userId: "bob", session: SessionID(20))
        try await join(harness, alice, bob)
        try await join(harness, otherBob)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        #expect(topicEvents(harness, to: otherBob).allSatisfy { $0.topicInfos.isEmpty })
        let answer = try await bus.request(SubscribeTopic(caller: otherBob, channelName: "live", topic: "video"))
        #expect(answer.succeedUsers.isEmpty, "the other app's topic has no publishers")
        _ = try await bus.request(SubscribeTopic(caller: otherBob, channelName: "live", topic: "video", users: ["alice"]))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video"))
        try await send(harness, alice, "app only")
        #expect(harness.outbox.messages(to: otherBob.session).isEmpty)
        #expect(harness.outbox.messages(to: bob.session).count == 1)
        await harness.stop()
    }

    @Test(arguments: [false, true]) func callsOutsideAJoinedChannelOrTopicAreRefused(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        await expectCode(.channelNotJoined) { _ = try await bus.request(LeaveStreamChannel(caller: alice, channelName: "live")) }
        await expectCode(.channelNotJoined) { _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "t")) }
        await expectCode(.channelNotJoined) { try await send(harness, alice, "x") }
        await expectCode(.channelNotJoined) { _ = try await bus.request(SubscribeTopic(caller: alice, channelName: "live", topic: "t")) }
        await expectCode(.channelNotJoined) {
            _ = try await bus.request(RenewStreamChannelToken(caller: alice, channelName: "live", token: "t"))
        }
        try await join(harness, alice)
        await expectCode(.duplicateOperation) { try await join(harness, alice) }
        await expectCode(.channelTopicNotJoined) { try await send(harness, alice, "x") }
        await expectCode(.channelTopicNotJoined) { _ = try await bus.request(LeaveTopic(caller: alice, channelName: "live", topic: "video")) }
        await expectCode(.channelTopicNotSubscribed) {
            _ = try await bus.request(UnsubscribeTopic(caller: alice, channelName: "live", topic: "video"))
        }
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        await expectCode(.duplicateOperation) { _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video")) }
        _ = try await bus.request(RenewStreamChannelToken(caller: alice, channelName: "live", token: "any"))
        await expectCode(.invalidChannelName) { try await join(harness, bob, channel: "") }
        await harness.stop()
    }

    @Test func limitsAreRefusedWithTheReferenceCodes() async throws {
        var limits = Limits()
        limits.streams.usersPerChannel = 2
        let harness = await world(limits: limits)
        let bus = harness.bus
        try await join(harness, alice, bob)
        await expectCode(.channelJoinFailed) { try await join(harness, carol) }
        for index in 0..<9 { try await join(harness, alice, channel: "c\(index)") }
        await expectCode(.channelInstanceExceedLimitation) { try await join(harness, alice, channel: "c9") }

        await expectCode(.channelInvalidTopicName) { _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "")) }
        await expectCode(.channelInvalidTopicName) {
            _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: String(repeating: "t", count: 17)))
        }
        await expectCode(.channelInvalidTopicMeta) {
            _ = try await bus.request(
                JoinTopic(caller: alice, channelName: "live", topic: "t", options: TopicJoinOptions(meta: String(repeating: "m", count: 257))))
        }
        _ = try await bus.request(
            JoinTopic(caller: alice, channelName: "live", topic: String(repeating: "t", count: 16),
                      options: TopicJoinOptions(meta: String(repeating: "m", count: 256))))
        for index in 1..<8 { _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "t\(index)")) }
        await expectCode(.channelJoinTopicFailed) { _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "t8")) }

        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "t1"))
        await expectCode(.channelMessageLengthExceedLimitation) {
            _ = try await bus.request(
                PublishTopicMessage(caller: alice, channelName: "live", topic: "t1", payload: .binary(Array(repeating: 0, count: 1025))))
        }
        _ = try await bus.request(
            PublishTopicMessage(caller: alice, channelName: "live", topic: "t1", payload: .binary(Array(repeating: 0, count: 1024))))
        await expectCode(.channelCustomTypeLengthOverflow) {
            _ = try await bus.request(
                PublishTopicMessage(caller: alice, channelName: "live", topic: "t1", payload: .string("x"), customType: String(repeating: "c", count: 33)))
        }
        #expect(harness.outbox.messages(to: bob.session).count == 1)
        await harness.stop()
    }

    @Test func subscribedTopicsPerChannelAreBounded() async throws {
        var limits = Limits()
        limits.streams.subscribedTopicsPerChannel = 2
        let harness = await world(limits: limits)
        let bus = harness.bus
        try await join(harness, alice, bob)
        for topic in ["a", "b", "c"] { _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: topic)) }
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "a"))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "b"))
        await expectCode(.channelExceedTopicLimitation) {
            _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "c"))
        }
        _ = try await bus.request(UnsubscribeTopic(caller: bob, channelName: "live", topic: "a"))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "c"))
        await harness.stop()
    }

    @Test(arguments: [false, true]) func eachTopicTakesTwoHundredMessagesPerSecondOnTheManualClock(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice, bob)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        _ = try await bus.request(JoinTopic(caller: bob, channelName: "live", topic: "video"))
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "audio"))
        for index in 0..<200 { try await send(harness, index.isMultiple(of: 2) ? alice : bob, "\(index)") }
        await expectCode(.operationRateExceedLimitation) { try await send(harness, bob, "over") }
        try await send(harness, alice, "another topic has its own budget", topic: "audio")
        harness.clock.advance(by: .milliseconds(999))
        await expectCode(.operationRateExceedLimitation) { try await send(harness, alice, "still over") }
        harness.clock.advance(by: .milliseconds(1))
        try await send(harness, alice, "a second later")
        await harness.stop()
    }

    @Test(arguments: [false, true]) func syncWithMediaTopicsStampMessagesWithSendTs(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        try await join(harness, alice, bob)
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "synced", options: TopicJoinOptions(syncWithMedia: true)))
        _ = try await bus.request(JoinTopic(caller: alice, channelName: "live", topic: "plain"))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "synced"))
        _ = try await bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "plain"))
        for topic in ["synced", "plain"] {
            _ = try await bus.request(
                PublishTopicMessage(caller: alice, channelName: "live", topic: topic, payload: .string("x"), customType: "t", sendTs: 42))
        }
        let got = harness.outbox.messages(to: bob.session)
        #expect(got.map(\.timestamp) == [42, harness.clock.wallMilliseconds])
        #expect(got.map(\.customType) == ["t", "t"])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aMemberIsWarnedOnceBeforeItsJoinTokenRunsOutAndAgainForARenewedOne(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        let start = harness.clock.wallMilliseconds / 1000
        harness.bus.handle(VerifyChannelJoinToken.self) { request in
            ChannelJoinGrant(expiresAt: request.token == "long" ? start + 600 : start + 60)
        }
        func warnings(_ caller: Caller) -> [SessionPush] {
            harness.outbox.pushes(to: caller.session).compactMap { if case .session(let push) = $0 { push } else { nil } }
        }
        _ = try await harness.bus.request(JoinStreamChannel(caller: alice, channelName: "live", token: "short"))
        _ = try await harness.bus.request(JoinStreamChannel(caller: alice, channelName: "side", token: "short"))
        _ = try await harness.bus.request(JoinStreamChannel(caller: bob, channelName: "live", token: "long"))
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(29))
        #expect(await harness.clock.waitForSleepers())
        #expect(warnings(alice).isEmpty)
        // Alice leaves "side" before its token nears its end; on "live" she is told, naming it.
        _ = try await harness.bus.request(LeaveStreamChannel(caller: alice, channelName: "side"))
        harness.clock.advance(by: .seconds(2))
        #expect(await harness.clock.waitForSleepers())
        #expect(warnings(alice) == [.tokenPrivilegeWillExpire(secondsLeft: 29, channel: "live")])
        harness.clock.advance(by: .seconds(5))
        #expect(await harness.clock.waitForSleepers())
        #expect(warnings(alice).count == 1)
        #expect(warnings(bob).isEmpty)
        // A renewed token is watched instead, and warned of in its turn.
        _ = try await harness.bus.request(RenewStreamChannelToken(caller: alice, channelName: "live", token: "long"))
        harness.clock.advance(by: .seconds(530))
        #expect(await harness.clock.waitForSleepers())
        #expect(warnings(alice).count == 1)
        harness.clock.advance(by: .seconds(5))
        #expect(await harness.clock.waitForSleepers())
        #expect(warnings(alice).last == .tokenPrivilegeWillExpire(secondsLeft: 29, channel: "live"))
        #expect(warnings(alice).count == 2)
        #expect(warnings(bob) == [.tokenPrivilegeWillExpire(secondsLeft: 29, channel: "live")])
        await harness.stop()
    }

    @Test(arguments: [false, true]) func aJoinTokenIsCheckedWhenAVerifierAnswers(suspendingStore: Bool) async throws {
        let harness = await world(suspendingStore: suspendingStore)
        harness.bus.handle(VerifyChannelJoinToken.self) { request throws(RtmError) in
            guard request.token == "good-\(request.channelName)-\(request.userId)" else {
                throw RtmError(.invalidToken, operation: "verify", reason: "bad token")
            }
            return ChannelJoinGrant(expiresAt: nil)
        }
        do {
            _ = try await harness.bus.request(JoinStreamChannel(caller: alice, channelName: "live", token: "good-other-alice"))
            Issue.record("a token for another channel must fail")
        } catch {
            #expect(error.code == .invalidToken)
            #expect(error.operation == "join")
        }
        _ = try await harness.bus.request(JoinStreamChannel(caller: alice, channelName: "live", token: "good-live-alice"))
        await expectCode(.invalidToken) {
            _ = try await harness.bus.request(RenewStreamChannelToken(caller: alice, channelName: "live", token: "bad"))
        }
        await harness.stop()
    }
}

/// Expects `body` to fail with `code`.
func expectCode(_ code: RtmErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code)", sourceLocation: sourceLocation)
    } catch {
        #expect((error as? RtmError)?.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

@Suite(.timeLimit(.minutes(2))) struct TopicStoreSeamTests {
    @Test func theRouterReachesItsStateOnlyThroughItsStore() async throws {
        let store = SuspendingTopicStore()
        let harness = await ModuleHarness(modules: [TopicRouter(store: store)])
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
        for caller in [alice, bob] { _ = try await harness.bus.request(JoinStreamChannel(caller: caller, channelName: "live")) }
        _ = try await harness.bus.request(JoinTopic(caller: alice, channelName: "live", topic: "video"))
        _ = try await harness.bus.request(SubscribeTopic(caller: bob, channelName: "live", topic: "video", users: ["alice"]))
        _ = try await harness.bus.request(PublishTopicMessage(caller: alice, channelName: "live", topic: "video", payload: .string("hi")))
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("hi")])
        #expect(store.calls.recorded == ["join", "join", "joinTopic", "subscribe", "publication"])
        await harness.stop()
    }
}
