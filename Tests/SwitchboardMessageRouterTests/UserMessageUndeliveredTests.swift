import Testing
import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTestKit

/// `UserMessageUndelivered` on the bus, for the webhooks' push notifications: a message to an
/// offline user is announced with the message, a delivered one never is.
@Suite(.timeLimit(.minutes(1))) struct UserMessageUndeliveredTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))

    @Test func aMessageToAnOfflineUserIsAnnouncedAndADeliveredOneIsNot() async throws {
        let sessions = FakeSessions()
        let harness = await ModuleHarness(modules: [sessions, MessageRouter()])
        sessions.add(bob.session, for: bob.user)
        harness.recorder.record(UserMessageUndelivered.self, on: harness.bus)
        harness.bus.publish(SessionOpened(caller: bob))
        _ = try await harness.bus.request(Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("hi")))
        do {
            _ = try await harness.bus.request(
                Publish(caller: alice, channelType: .user, channelName: "dave", payload: .binary([1, 2]), customType: "call"))
            Issue.record("a message to an offline user was taken")
        } catch {
            #expect(error.code == .channelReceiverOffline)
        }
        let announced = await harness.recorder.waitFor(UserMessageUndelivered.self, count: 1)
        #expect(announced.count == 1)
        #expect(announced.first?.receiver == UserKey("app", "dave") && announced.first?.publisher == alice)
        #expect(announced.first?.delivery.payload == .binary([1, 2]) && announced.first?.delivery.customType == "call")
        #expect(announced.first?.delivery.channelName == "alice", "as the receiver would have seen it")
        await harness.stop()
    }
}
