import Testing
import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTestKit

/// The server's API unsubscribes a user from a channel: every session of the user leaves, as if
/// each had unsubscribed itself.
extension MessageRouterTests {
    @Test(arguments: [false, true]) func unsubscribingAUserEndsEachOfItsSubscriptionsToThatChannel(suspendingStore: Bool) async throws {
        let (harness, sessions) = await world(suspendingStore: suspendingStore)
        let bobsPhone = Caller(app: "app", userId: "bob", session: SessionID(4))
        let bobElsewhere = Caller(app: "other", userId: "bob", session: SessionID(5))
        sessions.add(bobsPhone.session, for: bobsPhone.user)
        sessions.add(bobElsewhere.session, for: bobElsewhere.user)
        for caller in [alice, bob, bobsPhone, bobElsewhere] {
            _ = try await harness.bus.request(Subscribe(caller: caller, channelName: "room"))
        }
        _ = try await harness.bus.request(Subscribe(caller: bob, channelName: "lobby"))
        let server = Caller.server(app: "app", userId: "server")

        #expect(try await harness.bus.request(UnsubscribeUser(caller: server, channelName: "room", userId: "bob")) == 2)
        let left = await harness.recorder.waitFor(ChannelLeft.self, count: 2)
        #expect(Set(left.map(\.caller)) == [bob, bobsPhone])
        #expect(left.allSatisfy { $0.channel == ChannelKey(app: "app", .message, "room") && $0.reason == .left })

        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("after")))
        _ = try await harness.bus.request(
            Publish(caller: bobElsewhere, channelType: .message, channelName: "room", payload: .string("other app")))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .message, channelName: "lobby", payload: .string("lobby")))
        #expect(harness.outbox.messages(to: alice.session).map(\.payload) == [.string("after")])
        #expect(harness.outbox.messages(to: bobsPhone.session).isEmpty)
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("lobby")])
        #expect(harness.outbox.messages(to: bobElsewhere.session).map(\.payload) == [.string("other app")])

        await expectError(.channelNotSubscribed) {
            _ = try await harness.bus.request(UnsubscribeUser(caller: server, channelName: "room", userId: "bob"))
        }
        await expectError(.invalidUserId) {
            _ = try await harness.bus.request(UnsubscribeUser(caller: server, channelName: "room", userId: ""))
        }
        await harness.stop()
    }
}
