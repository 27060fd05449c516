import Testing
import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct MessageRouterRelayTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))

    func world(_ relay: FakeRelay, suspendingStore: Bool = false) async -> ModuleHarness {
        let sessions = FakeSessions()
        let router = suspendingStore ? MessageRouter(store: SuspendingSubscriptionStore()) : MessageRouter()
        let harness = await ModuleHarness(modules: [sessions, router, relay])
        for caller in [alice, bob] { sessions.add(caller.session, for: caller.user) }
        harness.recorder.record(ChannelLeft.self, on: harness.bus)
        harness.recorder.record(MessagePublished.self, on: harness.bus)
        return harness
    }

    @Test(arguments: [false, true]) func aSubscribeIsAnsweredOnceTheRelayListensToItsChannel(suspendingStore: Bool) async throws {
        let relay = FakeRelay()
        let harness = await world(relay, suspendingStore: suspendingStore)
        _ = try await harness.bus.request(Subscribe(caller: alice, channelName: "room"))
        #expect(relay.opened == [.channel(ChannelKey(app: "app", .message, "room"))])
    }

    @Test(arguments: [false, true]) func aSubscribeTheRelayCannotListenForFailsAndIsUndone(suspendingStore: Bool) async throws {
        let relay = FakeRelay(openFailure: RtmError(.channelSubscribeTimeout, operation: OpenRelay.operation, reason: "redis down"))
        let harness = await world(relay, suspendingStore: suspendingStore)
        do {
            _ = try await harness.bus.request(Subscribe(caller: alice, channelName: "room"))
            Issue.record("the subscribe succeeded")
        } catch {
            #expect(error.code == .channelSubscribeTimeout)
            #expect(error.operation == Subscribe.operation)
        }
        let left = await harness.recorder.waitFor(ChannelLeft.self, count: 1)
        #expect(left.map(\.caller) == [alice])
        // Undone: a message of the channel reaches nobody.
        _ = try await harness.bus.request(Publish(caller: bob, channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: alice.session).isEmpty)
    }

    @Test func aMessageToAUserOnNoSessionHereIsForwardedWithItsDelivery() async throws {
        let relay = FakeRelay()
        let harness = await world(relay)
        let request = Publish(caller: alice, channelType: .user, channelName: "dave", payload: .binary([1, 2]), customType: "t")
        // Not answered at once: it waits for the relay.
        #expect(try harness.bus.answerAtOnce(Publish.self) { request } == nil)
        _ = try await harness.bus.request(request)
        let forwarded = try #require(relay.forwarded.last)
        #expect(forwarded.receiver == UserKey("app", "dave"))
        #expect(forwarded.delivery.channelType == .user)
        #expect(forwarded.delivery.channelName == "alice")
        #expect(forwarded.delivery.publisher == "alice")
        #expect(forwarded.delivery.payload == .binary([1, 2]))
        #expect(forwarded.delivery.customType == "t")
        // A user with a session here is delivered to here, at once, and not forwarded.
        let toBob = Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("hi"))
        #expect(try harness.bus.answerAtOnce(Publish.self) { toBob } != nil)
        #expect(harness.outbox.messages(to: bob.session).count == 1)
        #expect(relay.forwarded.count == 1)
    }

    @Test func aMessageNoNodeTakesIsAnsweredReceiverOffline() async throws {
        let relay = FakeRelay(someNodeTakesUsers: false)
        let harness = await world(relay)
        do {
            _ = try await harness.bus.request(Publish(caller: alice, channelType: .user, channelName: "dave", payload: .string("?")))
            Issue.record("the publish succeeded")
        } catch {
            #expect(error.code == .channelReceiverOffline)
            #expect(error.operation == Publish.operation)
        }
        #expect(relay.forwarded.count == 1)
    }

    @Test func aRelayedMessageReachesTheListenersHereAndIsNotRelayedAgain() async throws {
        let relay = FakeRelay()
        let harness = await world(relay)
        _ = try await harness.bus.request(Subscribe(caller: alice, channelName: "room"))
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "room", features: [.presence]))
        let delivery = MessageDelivery(
            channelType: .message, channelName: "room", payload: .string("from afar"), publisher: "zed", customType: "",
            timestamp: 7)
        let room = ChannelKey(app: "app", .message, "room")
        #expect(try harness.bus.answerAtOnce(DeliverRelayedMessage.self) { DeliverRelayedMessage(target: .channel(room), delivery: delivery) } != nil)
        #expect(harness.outbox.messages(to: alice.session) == [delivery])
        #expect(harness.outbox.messages(to: bob.session).isEmpty)
        // To a user of this node.
        let direct = MessageDelivery(
            channelType: .user, channelName: "zed", payload: .string("psst"), publisher: "zed", customType: "", timestamp: 8)
        _ = try await harness.bus.request(DeliverRelayedMessage(target: .user(UserKey("app", "bob")), delivery: direct))
        #expect(harness.outbox.messages(to: bob.session) == [direct])
        // A local publish is announced for the relay; the relayed ones were not.
        _ = try await harness.bus.request(Publish(caller: bob, channelType: .message, channelName: "room", payload: .string("here")))
        let published = await harness.recorder.waitFor(MessagePublished.self, count: 1)
        #expect(published.map(\.delivery.payload) == [.string("here")])
        #expect(published.first?.channel == room)
    }
}
