import Testing
import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct MessageRouterTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))

    /// A router over an in-memory store, or (`suspendingStore`) over one that suspends on every call.
    func world(limits: Limits = Limits(), suspendingStore: Bool = false) async -> (ModuleHarness, FakeSessions) {
        let sessions = FakeSessions()
        let router = suspendingStore ? MessageRouter(store: SuspendingSubscriptionStore()) : MessageRouter()
        let harness = await ModuleHarness(limits: limits, modules: [sessions, router])
        for caller in [alice, bob, carol] { sessions.add(caller.session, for: caller.user) }
        harness.recorder.record(ChannelJoined.self, on: harness.bus)
        harness.recorder.record(ChannelLeft.self, on: harness.bus)
        return (harness, sessions)
    }

    func expectError(_ code: RtmErrorCode, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch {
            #expect((error as? RtmError)?.code == code, "\(error)")
        }
    }

    @Test(arguments: [false, true]) func subscribersReceiveEachMessageOnceInOrder(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        for caller in [alice, bob, carol] {
            _ = try await harness.bus.request(Subscribe(caller: caller, channelName: "room"))
        }
        for index in 0..<20 {
            let payload: MessagePayload = index.isMultiple(of: 2) ? .string("m\(index)") : .binary([UInt8(index), 0, 255])
            _ = try await harness.bus.request(
                Publish(caller: alice, channelType: .message, channelName: "room", payload: payload, customType: "t"))
        }
        for session in [alice, bob, carol] {
            let messages = harness.outbox.messages(to: session.session)
            #expect(messages.count == 20)
            #expect(messages.map(\.payload) == (0..<20).map { $0.isMultiple(of: 2) ? .string("m\($0)") : .binary([UInt8($0), 0, 255]) })
            #expect(messages.allSatisfy { $0.publisher == "alice" && $0.channelName == "room" && $0.channelType == .message && $0.customType == "t" && $0.channelTopic.isEmpty })
        }
        let joined = await harness.recorder.waitFor(ChannelJoined.self, count: 3)
        #expect(joined.map(\.channel) == Array(repeating: ChannelKey(app: "app", .message, "room"), count: 3))
    }

    @Test(arguments: [false, true]) func subscribersWithoutTheMessageFeatureGetNoMessages(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room", features: [.presence]))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: bob.session).isEmpty)
    }

    @Test(arguments: [false, true]) func userChannelDeliversToTheUserAndRefusesOfflineUsers(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("psst")))
        let got = harness.outbox.messages(to: bob.session)
        #expect(got.count == 1)
        #expect(got.first?.channelType == .user)
        #expect(got.first?.channelName == "alice")
        #expect(got.first?.publisher == "alice")
        await expectError(.channelReceiverOffline) {
            _ = try await harness.bus.request(Publish(caller: alice, channelType: .user, channelName: "dave", payload: .string("?")))
        }
    }

    @Test(arguments: [false, true]) func userChannelsFollowTheSessionEventsAsTheyArePublished(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let dave = Caller(app: "app", userId: "dave", session: SessionID(9))
        let toDave = Publish(caller: alice, channelType: .user, channelName: "dave", payload: .string("hi"))
        func publish(_ request: Publish) throws(RtmError) -> Done? {
            try harness.bus.answerAtOnce(Publish.self) { request }
        }
        harness.bus.publish(SessionOpened(caller: dave))
        #expect(try publish(toDave) != nil)
        #expect(harness.outbox.messages(to: dave.session).count == 1)
        harness.bus.publish(SessionClosed(caller: dave, reason: .logout))
        await expectError(.channelReceiverOffline) { _ = try publish(toDave) }
    }

    @Test(arguments: [false, true]) func aUserWithSeveralSessionsGetsTheMessageOnEachOldestFirst(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let newer = Caller(app: "app", userId: "erin", session: SessionID(41))
        let older = Caller(app: "app", userId: "erin", session: SessionID(40))
        let toErin = Publish(caller: alice, channelType: .user, channelName: "erin", payload: .string("hi"))
        harness.bus.publish(SessionOpened(caller: newer))
        harness.bus.publish(SessionOpened(caller: older))
        _ = try harness.bus.answerAtOnce(Publish.self) { toErin }
        #expect(harness.outbox.receiverLists.last == [older.session, newer.session])
        harness.bus.publish(SessionClosed(caller: older, reason: .logout))
        _ = try harness.bus.answerAtOnce(Publish.self) { toErin }
        #expect(harness.outbox.receiverLists.last == [newer.session])
        #expect(harness.outbox.messages(to: newer.session).count == 2)
        #expect(harness.outbox.messages(to: older.session).count == 1)
    }

    @Test(arguments: [false, true]) func limitsAreRefusedWithTheReferenceCodes(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        let bus = harness.bus
        await expectError(.channelMessageLengthExceedLimitation) {
            _ = try await bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .binary(Array(repeating: 0, count: 32 * 1024 + 1))))
        }
        _ = try await bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .binary(Array(repeating: 0, count: 32 * 1024))))
        await expectError(.channelCustomTypeLengthOverflow) {
            _ = try await bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x"), customType: String(repeating: "c", count: 33)))
        }
        // The limit counts characters, not bytes: 32 two-byte characters pass, 33 do not.
        _ = try await bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x"), customType: String(repeating: "é", count: 32)))
        await expectError(.channelCustomTypeLengthOverflow) {
            _ = try await bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x"), customType: String(repeating: "é", count: 33)))
        }
        await expectError(.invalidChannelName) {
            _ = try await bus.request(Subscribe(caller: alice, channelName: String(repeating: "n", count: 65)))
        }
        await expectError(.invalidChannelName) {
            _ = try await bus.request(Subscribe(caller: alice, channelName: ""))
        }
        await expectError(.invalidChannelType) {
            _ = try await bus.request(Publish(caller: alice, channelType: .stream, channelName: "room", payload: .string("x")))
        }
        for index in 0..<50 {
            _ = try await bus.request(Subscribe(caller: alice, channelName: "c\(index)"))
        }
        await expectError(.channelInstanceExceedLimitation) {
            _ = try await bus.request(Subscribe(caller: alice, channelName: "c50"))
        }
        // Subscribing again to a channel already held is not a new channel, and the session holds
        // exactly 50: one unsubscribe makes room for exactly one more.
        _ = try await bus.request(Subscribe(caller: alice, channelName: "c0", features: [.message]))
        _ = try await bus.request(Unsubscribe(caller: alice, channelName: "c1"))
        _ = try await bus.request(Subscribe(caller: alice, channelName: "c50"))
        await expectError(.channelInstanceExceedLimitation) {
            _ = try await bus.request(Subscribe(caller: alice, channelName: "c51"))
        }
    }

    @Test(arguments: [false, true]) func unsubscribeStopsDeliveryAndUnknownChannelsAreRefused(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room"))
        _ = try await harness.bus.request(Unsubscribe(caller: bob, channelName: "room"))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: bob.session).isEmpty)
        await expectError(.channelNotSubscribed) {
            _ = try await harness.bus.request(Unsubscribe(caller: bob, channelName: "room"))
        }
        let left = await harness.recorder.waitFor(ChannelLeft.self)
        #expect(left.first?.reason == .left)
    }

    @Test(arguments: [false, true]) func aClosedSessionLosesItsSubscriptions(suspendingStore: Bool) async throws {
        let (harness, _) = await world(suspendingStore: suspendingStore)
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "a"))
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "b"))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "a", payload: .string("before")))
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("before")])
        await harness.bus.publishAndWait(SessionClosed(caller: bob, reason: .timedOut))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "a", payload: .string("after")))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "b", payload: .string("after")))
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("before")])
        let left = await harness.recorder.waitFor(ChannelLeft.self, count: 2)
        #expect(left.map(\.channel.name) == ["a", "b"])
        #expect(left.allSatisfy { $0.reason == .sessionClosed(.timedOut) })
    }
}

@Suite(.timeLimit(.minutes(2))) struct MessageRouterRaceTests {
    static func user(_ id: Int) -> Caller { Caller(app: "app", userId: "u\(id)", session: SessionID(UInt64(id))) }

    @Test func aSubscribeThatArrivesAfterItsSessionEndedLeavesNothing() async throws {
        let harness = await ModuleHarness(modules: [FakeSessions(), MessageRouter()])
        let gone = Caller(app: "app", userId: "gone", session: SessionID(9))
        await harness.bus.publishAndWait(SessionClosed(caller: gone, reason: .replacedBySameUser))
        do {
            _ = try await harness.bus.request(Subscribe(caller: gone, channelName: "room"))
            Issue.record("an ended session must not subscribe")
        } catch {
            #expect(error.code == .notLogin)
        }
        let alive = Self.user(1)
        _ = try await harness.bus.request(Subscribe(caller: alive, channelName: "room"))
        _ = try await harness.bus.request(Publish(caller: alive, channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: alive.session).count == 1, "a live session's subscribe is delivered to")
        #expect(harness.outbox.messages(to: gone.session).isEmpty)
    }

    @Test func aChannelHoldsAtMostUsersPerChannelSubscribers() async throws {
        var limits = Limits()
        limits.messages.usersPerChannel = 2
        let harness = await ModuleHarness(limits: limits, modules: [FakeSessions(), MessageRouter()])
        for id in 1...2 {
            _ = try await harness.bus.request(Subscribe(caller: Self.user(id), channelName: "room"))
        }
        do {
            _ = try await harness.bus.request(Subscribe(caller: Self.user(3), channelName: "room"))
            Issue.record("a full channel must refuse")
        } catch {
            #expect(error.code == .channelJoinFailed)
        }
        // Changing the features of an existing subscription is not a new subscriber.
        _ = try await harness.bus.request(Subscribe(caller: Self.user(1), channelName: "room", features: [.message]))
    }
}

@Suite(.timeLimit(.minutes(2))) struct MessageRouterAppTests {
    @Test func appsWithTheSameChannelAndUserNamesNeverMeet() async throws {
        let sessions = FakeSessions()
        let aliceA = Caller(app: "a", userId: "alice", session: SessionID(1))
        let bobA = Caller(app: "a", userId: "bob", session: SessionID(2))
        let bobB = Caller(app: "b", userId: "bob", session: SessionID(3))
        let harness = await ModuleHarness(modules: [sessions, MessageRouter()])
        for caller in [aliceA, bobA, bobB] { sessions.add(caller.session, for: caller.user) }
        _ = try await harness.bus.request(Subscribe(caller: bobA, channelName: "room"))
        _ = try await harness.bus.request(Subscribe(caller: bobB, channelName: "room"))
        _ = try await harness.bus.request(
            Publish(caller: aliceA, channelType: .message, channelName: "room", payload: .string("to a")))
        _ = try await harness.bus.request(Publish(caller: aliceA, channelType: .user, channelName: "bob", payload: .string("dm")))
        #expect(harness.outbox.messages(to: bobA.session).map(\.payload) == [.string("to a"), .string("dm")])
        #expect(harness.outbox.messages(to: bobB.session).isEmpty)
        do {
            let aliceB = Caller(app: "b", userId: "alice", session: SessionID(4))
            _ = try await harness.bus.request(Publish(caller: aliceB, channelType: .user, channelName: "alice", payload: .string("?")))
            Issue.record("alice is not online in app b")
        } catch {
            #expect(error.code == .channelReceiverOffline)
        }
        await harness.stop()
    }
}

@Suite(.timeLimit(.minutes(2))) struct MessageRouterRateTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))

    @Test func aChannelCarriesSixtyMessagesASecondAndDiscardsTheRest() async throws {
        let router = MessageRouter()
        let harness = await ModuleHarness(modules: [FakeSessions(), router])
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room"))
        for index in 0..<70 {
            // Every publish succeeds, as the reference's do; the excess is not delivered.
            _ = try await harness.bus.request(
                Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("\(index)")))
        }
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "other", payload: .string("o")))
        #expect(harness.outbox.messages(to: bob.session).count == 60)
        #expect(await router.discardedMessages == 10)
        harness.clock.advance(by: .seconds(1))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("later")))
        #expect(harness.outbox.messages(to: bob.session).last?.payload == .string("later"))
        await harness.stop()
    }

    @Test func theSameChannelTakesTwoSubscribeCallsInFiveSeconds() async throws {
        let harness = await ModuleHarness(modules: [FakeSessions(), MessageRouter()])
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room"))
        _ = try await harness.bus.request(Unsubscribe(caller: bob, channelName: "room"))
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room"))
        do {
            _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room"))
            Issue.record("a third subscribe within 5 s must be refused")
        } catch {
            #expect(error.code == .channelSubscribeTooFrequent)
        }
        // Another channel and another session are counted apart.
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "hall"))
        _ = try await harness.bus.request(Subscribe(caller: alice, channelName: "room"))
        harness.clock.advance(by: .seconds(5))
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room"))
        await harness.stop()
    }
}

@Suite(.timeLimit(.minutes(2))) struct SubscriptionStoreSeamTests {
    @Test func theRouterReachesSubscriptionsOnlyThroughItsStore() async throws {
        let store = SuspendingSubscriptionStore()
        let sessions = FakeSessions()
        let harness = await ModuleHarness(modules: [sessions, MessageRouter(store: store)])
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        sessions.add(alice.session, for: alice.user)
        _ = try await harness.bus.request(Subscribe(caller: alice, channelName: "room"))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: alice.session).count == 1)
        _ = try await harness.bus.request(Unsubscribe(caller: alice, channelName: "room"))
        await harness.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        #expect(store.calls.recorded == ["subscribe", "unsubscribe", "sessionEnded"])
        await harness.stop()
    }
}
