import Foundation
import Synchronization
import Testing
import SwitchboardCore
@testable import SwitchboardMessageRouter
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct PublishesInFlightTests {
    let room = ChannelKey(app: "app", .message, "room")
    let hall = ChannelKey(app: "app", .message, "hall")

    @Test func aChangeWaitsForThePublishesBeforeItAndNoOthers() throws {
        var inFlight = PublishesInFlight<String>()
        #expect(inFlight.barrier(for: room) == nil)
        let first = inFlight.start(room), second = inFlight.start(room)
        let elsewhere = inFlight.start(hall)
        let barrier = try #require(inFlight.barrier(for: room))
        let kept = inFlight.wait("unsubscribe", at: barrier)
        #expect(kept)
        // A publish that starts after the change is not waited for, however long it takes.
        let later = inFlight.start(room)
        let afterHall = inFlight.finish(elsewhere, of: hall)
        let afterSecond = inFlight.finish(second, of: room)
        let afterFirst = inFlight.finish(first, of: room)
        let afterLater = inFlight.finish(later, of: room)
        #expect(afterHall.isEmpty && afterSecond.isEmpty && afterLater.isEmpty)
        #expect(afterFirst == ["unsubscribe"])
        #expect(inFlight.channelCount == 0)
    }

    @Test func aChangeWithNothingBeforeItIsNotKept() throws {
        var inFlight = PublishesInFlight<String>()
        let ticket = inFlight.start(room)
        let barrier = try #require(inFlight.barrier(for: room))
        _ = inFlight.finish(ticket, of: room)
        let kept = inFlight.wait("late", at: barrier)
        #expect(!kept)
        #expect(inFlight.channelCount == 0)
    }
}

/// An outbox whose first message delivery waits at a gate: a publish held between reading its
/// receivers and handing the push over, as a busy delivery lock or a long encoding holds it.
private final class GatedOutbox: Outbox {
    let entered = Atomic<Bool>(false)
    let gate = DispatchSemaphore(value: 0)
    private let first = Atomic<Bool>(true)
    let deliveries = Mutex<[[SessionID]]>([])

    func open(_ session: SessionID) {}
    func deliver(_ push: Push, to sessions: [SessionID]) {
        if case .message = push, first.exchange(false, ordering: .relaxed) {
            entered.store(true, ordering: .releasing)
            gate.wait()
        }
        deliveries.withLock { $0.append(sessions) }
    }
    func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String) {}
    func release(_ session: SessionID) {}
}

@Suite(.timeLimit(.minutes(2))) struct UnsubscribeOrderTests {
    @Test func anUnsubscribeIsAnsweredOnlyAfterAPublishThatReadItsReceiversIsHandedOver() async throws {
        let bus = EventBus()
        let outbox = GatedOutbox()
        let router = MessageRouter()
        await router.start(ModuleContext(bus: bus, clock: ManualClock(), limits: Limits(), outbox: outbox))
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
        for caller in [bob, alice] { _ = try await bus.request(Subscribe(caller: caller, channelName: "room")) }

        // Alice publishes on a thread of its own, as an event loop answering her frame at once,
        // and is held after reading the receivers (bob among them).
        let publishing = Thread {
            _ = try? bus.answerAtOnce(Publish.self) {
                Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("last"))
            }
        }
        publishing.start()
        while !outbox.entered.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }

        let answered = Atomic<Bool>(false)
        let unsubscribe = Task {
            _ = try await bus.request(Unsubscribe(caller: bob, channelName: "room"))
            answered.store(true, ordering: .releasing)
        }
        try await Task.sleep(for: .milliseconds(200))
        let answeredEarly = answered.load(ordering: .acquiring)
        #expect(!answeredEarly, "bob's unsubscribe was answered while a push to him was on its way")
        outbox.gate.signal()
        try await unsubscribe.value
        // The push reached bob before his ok; the next one does not reach him.
        let first = outbox.deliveries.withLock { $0 }
        #expect(first == [[alice.session, bob.session]])
        _ = try bus.answerAtOnce(Publish.self) {
            Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("after"))
        }
        let last = outbox.deliveries.withLock { $0.last }
        #expect(last == [alice.session])
        bus.close()
    }
}
