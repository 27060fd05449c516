import Testing
import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTestKit

/// A publish read in place (`PublishInPlace`) reaches its receivers exactly as the owned
/// `Publish` does, and anything else is left to `Publish`, with nothing delivered.
@Suite(.timeLimit(.minutes(2))) struct PublishInPlaceTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))

    func world() async -> ModuleHarness {
        let sessions = FakeSessions()
        let harness = await ModuleHarness(modules: [sessions, MessageRouter()])
        for caller in [alice, bob, carol] { sessions.add(caller.session, for: caller.user) }
        // Carol is on two devices.
        sessions.add(SessionID(4), for: carol.user)
        return harness
    }

    /// `publish` read in place at `receivedAt`: its text lent from memory of its own, as a
    /// received frame's is.
    func inPlace<T>(
        _ publish: Publish, receivedAt: UInt64, memo: UnsafeMutablePointer<ReceiverMemo>? = nil, _ body: (PublishInPlace) throws -> T
    ) rethrows -> T {
        let payload: [UInt8]
        switch publish.payload {
        case .string(let text): payload = Array(text.utf8)
        case .binary(let bytes): payload = bytes
        }
        return try Array(publish.channelName.utf8).withUnsafeBytes { name in
            try payload.withUnsafeBytes { payloadBytes in
                try Array(publish.customType.utf8).withUnsafeBytes { customType in
                    let isString = if case .string = publish.payload { true } else { false }
                    return try body(
                        PublishInPlace(
                            caller: publish.caller, channelType: publish.channelType, channelName: name, payload: payloadBytes,
                            payloadIsString: isString, customType: customType, receivedAt: receivedAt,
                            receiverMemo: memo))
                }
            }
        }
    }

    @Test func aUserGetsWhatTheOwnedPublishWouldDeliver() async throws {
        let harness = await world()
        let publishes = [
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("psst")),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .binary([0, 1, 255]), customType: "kind"),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("é🙂"), customType: String(repeating: "é", count: 32)),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .binary(Array(repeating: 7, count: 32 * 1024))),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("")),
        ]
        for publish in publishes {
            #expect(try inPlace(publish, receivedAt: harness.clock.wallMilliseconds) { try harness.bus.answerInPlace($0) } != nil, "\(publish.customType)")
            _ = try await harness.bus.request(publish)
        }
        let got = harness.outbox.messages(to: bob.session)
        #expect(got.count == 2 * publishes.count)
        for index in publishes.indices {
            #expect(got[2 * index] == got[2 * index + 1])
            #expect(got[2 * index].payload == publishes[index].payload)
            #expect(got[2 * index].channelName == "alice" && got[2 * index].publisher == "alice")
        }
        #expect(harness.outbox.messages(to: alice.session).isEmpty)
    }

    /// Alice publishing in place through one memo of her receiver, as her connection does.
    final class MemoPublisher {
        let harness: ModuleHarness
        let suite: PublishInPlaceTests
        let memo = UnsafeMutablePointer<ReceiverMemo>.allocate(capacity: 1)

        init(_ harness: ModuleHarness, in suite: PublishInPlaceTests) {
            (self.harness, self.suite) = (harness, suite)
            memo.initialize(to: ReceiverMemo())
        }

        deinit { memo.deinitialize(count: 1).deallocate() }

        /// Publishes `text` to `receiver` in place through the memo; whether it was answered so.
        func send(_ text: String, to receiver: String) throws -> Bool {
            let publish = Publish(caller: suite.alice, channelType: .user, channelName: receiver, payload: .string(text))
            return try suite.inPlace(publish, receivedAt: harness.clock.wallMilliseconds, memo: memo) { try harness.bus.answerInPlace($0) } != nil
        }
    }

    @Test func aPublishersMemoOfItsReceiverHoldsOnlyWhileNobodyLogsInOrOut() async throws {
        let harness = await world()
        let publisher = MemoPublisher(harness, in: self)
        #expect(try publisher.send("1", to: "bob"))
        #expect(try publisher.send("2", to: "bob"))
        // Another receiver of the same length, then back: each found as it is.
        #expect(try publisher.send("3", to: "eve") == false)
        #expect(try publisher.send("4", to: "bob"))
        // Bob moves to another session: the memo no longer holds, his new session gets the next.
        harness.bus.publish(SessionClosed(caller: bob, reason: .logout))
        #expect(try publisher.send("5", to: "bob") == false)
        let bobAgain = Caller(app: "app", userId: "bob", session: SessionID(9))
        harness.bus.publish(SessionOpened(caller: bobAgain))
        #expect(try publisher.send("6", to: "bob"))
        // A second session of his: several now, left to `Publish`.
        harness.bus.publish(SessionOpened(caller: Caller(app: "app", userId: "bob", session: SessionID(10))))
        #expect(try publisher.send("7", to: "bob") == false)
        func texts(_ session: SessionID) -> [MessagePayload] { harness.outbox.messages(to: session).map(\.payload) }
        #expect(texts(bob.session) == [.string("1"), .string("2"), .string("4")])
        #expect(texts(bobAgain.session) == [.string("6")])
        #expect(texts(SessionID(10)).isEmpty)
    }

    @Test func aNameOnlyTheMemoHoldsIsStillCheckedAgainstTheLimitsInForce() async throws {
        let harness = await world()
        let publisher = MemoPublisher(harness, in: self)
        // Names that are no user id are left to `Publish` through a memo too, which keeps bob,
        // even one a session was opened for here.
        harness.bus.publish(SessionOpened(caller: Caller(app: "app", userId: "b\tob", session: SessionID(20))))
        #expect(try publisher.send("1", to: "bob"))
        for invalid in ["", "b\tob", "bö", String(repeating: "b", count: 65)] { #expect(try publisher.send("x", to: invalid) == false, "\(invalid)") }
        #expect(harness.outbox.messages(to: SessionID(20)).isEmpty)
        #expect(try publisher.send("2", to: "bob"))
        // Limits reloaded to user ids of at most two bytes: bob, though remembered, is refused.
        var limits = Limits()
        limits.names.userIdMaxBytes = 2
        harness.context.limitsBook.replaceServerLimits(with: limits)
        #expect(try publisher.send("3", to: "bob") == false)
        #expect(harness.outbox.messages(to: bob.session).map(\.payload) == [.string("1"), .string("2")])
    }

    @Test func aMessageIsStampedWhenTheServerReadIt() async throws {
        let harness = await world()
        let publish = Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("psst"))
        let readAt = harness.clock.wallMilliseconds + 1_500
        #expect(try inPlace(publish, receivedAt: readAt) { try harness.bus.answerInPlace($0) } != nil)
        #expect(harness.outbox.messages(to: bob.session).map(\.timestamp) == [readAt])
    }

    @Test func aChannelsSubscribersGetWhatTheOwnedPublishWouldDeliver() async throws {
        let harness = await world()
        let channel = String(repeating: "é", count: 64)
        for caller in [bob, carol] { _ = try await harness.bus.request(Subscribe(caller: caller, channelName: channel)) }
        let publishes = [
            Publish(caller: alice, channelType: .message, channelName: channel, payload: .string("hi"), customType: "kind"),
            Publish(caller: alice, channelType: .message, channelName: channel, payload: .binary([0, 1, 255])),
        ]
        for publish in publishes {
            #expect(try inPlace(publish, receivedAt: harness.clock.wallMilliseconds) { try harness.bus.answerInPlace($0) } != nil)
            _ = try await harness.bus.request(publish)
        }
        for receiver in [bob, carol] {
            let got = harness.outbox.messages(to: receiver.session)
            #expect(got.count == 2 * publishes.count)
            for index in publishes.indices {
                #expect(got[2 * index] == got[2 * index + 1])
                #expect(got[2 * index].channelName == channel && got[2 * index].publisher == "alice")
                #expect(got[2 * index].payload == publishes[index].payload)
            }
        }
        // A channel nobody hears takes the publish and delivers nothing.
        let unheard = Publish(caller: alice, channelType: .message, channelName: "empty", payload: .string("x"))
        let before = harness.outbox.receiverLists.count
        let answered = try inPlace(unheard, receivedAt: harness.clock.wallMilliseconds) { try harness.bus.answerInPlace($0) }
        #expect(answered != nil)
        let lists = harness.outbox.receiverLists.dropFirst(before)
        #expect(lists.allSatisfy { $0.isEmpty })
    }

    @Test func anythingButOneReceiverHereWithinTheLimitsIsLeftToPublish() async throws {
        let harness = await world()
        let declined = [
            Publish(caller: alice, channelType: .message, channelName: "", payload: .string("x")),
            Publish(caller: alice, channelType: .message, channelName: "r\u{1}oom", payload: .string("x")),
            Publish(caller: alice, channelType: .message, channelName: String(repeating: "é", count: 65), payload: .string("x")),
            Publish(caller: alice, channelType: .message, channelName: "room", payload: .string("x"), customType: "a\u{7}b"),
            Publish(caller: alice, channelType: .user, channelName: "dave", payload: .string("offline")),
            Publish(caller: alice, channelType: .user, channelName: "carol", payload: .string("two sessions")),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .binary(Array(repeating: 0, count: 32 * 1024 + 1))),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("x"), customType: String(repeating: "é", count: 33)),
            Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("x"), customType: "a\u{7}b"),
            Publish(caller: alice, channelType: .user, channelName: "", payload: .string("x")),
            Publish(caller: alice, channelType: .user, channelName: "b\tob", payload: .string("x")),
            Publish(caller: alice, channelType: .user, channelName: String(repeating: "b", count: 65), payload: .string("x")),
            Publish(caller: alice, channelType: .stream, channelName: "bob", payload: .string("x")),
        ]
        for publish in declined {
            #expect(try inPlace(publish, receivedAt: harness.clock.wallMilliseconds) { try harness.bus.answerInPlace($0) } == nil, "\(publish.channelName) \(publish.customType)")
        }
        #expect(harness.outbox.receiverLists.isEmpty)
    }

    @Test func aListenerOfMessagePublishedGetsEveryPublishThroughPublish() async throws {
        let harness = await world()
        harness.recorder.record(MessagePublished.self, on: harness.bus)
        let publish = Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("seen"))
        #expect(try inPlace(publish, receivedAt: harness.clock.wallMilliseconds) { try harness.bus.answerInPlace($0) } == nil)
        #expect(harness.outbox.receiverLists.isEmpty)
    }

    @Test func aBusWithoutTheRouterAnswersNoneInPlace() async throws {
        let harness = await ModuleHarness(modules: [FakeSessions()])
        let publish = Publish(caller: alice, channelType: .user, channelName: "bob", payload: .string("x"))
        #expect(!harness.bus.hasHandler(PublishInPlace.self))
        #expect(try inPlace(publish, receivedAt: harness.clock.wallMilliseconds) { try harness.bus.answerInPlace($0) } == nil)
    }
}
