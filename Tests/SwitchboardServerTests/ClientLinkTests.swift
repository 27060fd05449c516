import Testing
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardWire

@testable import SwitchboardServer

/// A link's life around its requests: pushes reaching it, its close reported to the session module
/// once and after what it had queued, the login deadline, the bound on waiting requests, and a
/// disconnect the client is told of.
@Suite(.timeLimit(.minutes(2))) struct ClientLinkTests {
    /// Published by a test on the bus, to place its own step among the events it records.
    private struct Mark: BusEvent {}

    @Test func aPushReachesTheLinkOfASubscribedSession() async {
        let harness = await LinkHarness()
        let (alice, aliceLink) = harness.connect()
        let (bob, bobLink) = harness.connect()
        #expect(await harness.logIn("alice", on: aliceLink)?.loginAccepted != nil)
        #expect(await harness.logIn("bob", on: bobLink)?.loginAccepted != nil)
        harness.send(.subscribe(id: 2, channel: "room", features: .message), on: aliceLink)
        #expect(await alice.answer(to: 2) == .answer(id: 2, .done))
        harness.send(.publish(id: 2, channelType: .message, channel: "room", message: .string("hi")), on: bobLink)
        #expect(await bob.answer(to: 2) == .answer(id: 2, .done))
        let delivered = await alice.frames(count: 3).compactMap(\.deliveredMessage)
        #expect(delivered.map(\.payload) == [.string("hi")])
        #expect(delivered.map(\.publisher) == ["bob"])
        #expect(delivered.map(\.channelName) == ["room"])
        // The publisher is not subscribed: it gets its answer and nothing else.
        #expect(bob.frames.compactMap(\.deliveredMessage).isEmpty)
        harness.stop()
    }

    @Test func aClosedLinkPublishesSessionDisconnectedOnce() async throws {
        let harness = await LinkHarness()
        harness.recorder.record(SessionDisconnected.self, on: harness.bus)
        let (_, aliceLink) = harness.connect()
        let (bob, bobLink) = harness.connect()
        let alice = try #require(await harness.logIn("alice", on: aliceLink)?.loginAccepted?.ticket.session)
        let bobSession = try #require(await harness.logIn("bob", on: bobLink)?.loginAccepted?.ticket.session)
        harness.drop(aliceLink.socket)
        #expect(await harness.recorder.waitFor(SessionDisconnected.self).map(\.session) == [alice])
        // The transport reporting the close again changes nothing; bob's close, reported after it,
        // is the next and last event.
        harness.drop(aliceLink.socket)
        harness.drop(bob)
        let reported = await harness.recorder.waitFor(SessionDisconnected.self, count: 2)
        #expect(reported.map(\.session) == [alice, bobSession])
        #expect(harness.registry.connectionCount == 0)
        harness.stop()
    }

    @Test func aClosedLinkIsReportedOnlyOnceItsQueuedRequestsAreAnswered() async throws {
        let gate = WaitingRequestsTests.Gate()
        let harness = await LinkHarness(modules: [FakeSessions(), FakeMessageRouter(), gate])
        harness.recorder.record(SessionDisconnected.self, on: harness.bus)
        harness.recorder.record(Mark.self, on: harness.bus)
        let (connection, link) = harness.connect()
        let session = try #require(await harness.logIn("alice", on: link)?.loginAccepted?.ticket.session)
        harness.send(ClientFrame(id: 2, .extension(ExtensionOperation("stall"))), on: link)
        harness.send(ClientFrame(id: 3, .session(.heartbeat)), on: link)
        harness.drop(connection)
        // Had the close been reported at once, its event would come before this mark.
        harness.bus.publish(Mark())
        gate.release()
        #expect(await harness.recorder.waitFor(SessionDisconnected.self).map(\.session) == [session])
        #expect(harness.recorder.all.map { $0 is Mark } == [true, false])
        harness.stop()
    }

    @Test func theLoginDeadlineClosesOnlyTheLinksThatNeverLoggedIn() async {
        let harness = await LinkHarness(loginTimeout: .seconds(5))
        // The link that logs in opens first, so its deadline is looked at first.
        let (member, memberLink) = harness.connect()
        let (idle, _) = harness.connect()
        #expect(await harness.logIn("alice", on: memberLink)?.loginAccepted != nil)
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(4))
        harness.send(ClientFrame(id: 2, .session(.heartbeat)), on: memberLink)
        #expect(await member.answer(to: 2) == .answer(id: 2, .done))
        #expect(idle.closed == nil)
        harness.clock.advance(by: .seconds(1))
        #expect(await idle.awaitClose() == RecordingConnection.Close(code: .policyViolation, reason: "login timeout"))
        #expect(member.closed == nil)
        harness.stop()
    }

    @Test func pastItsBoundOfWaitingRequestsALinkIsClosedWith1008() async {
        let gate = WaitingRequestsTests.Gate()
        let harness = await LinkHarness(limits: .withoutRateLimits, modules: [FakeSessions(), FakeMessageRouter(), gate])
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        harness.send(ClientFrame(id: 2, .extension(ExtensionOperation("stall"))), on: link)
        // Once the request loop has taken the stalled call, what follows waits in the link's inbox.
        #expect(await eventually { link.waitingBytes == 0 })
        let publish = ClientFrame.publish(
            id: 3, channelType: .message, channel: "room", message: .binary(Array(repeating: 7, count: 1_000_000))
        ).encode()
        let fitting = ConnectionHub<RecordingConnection>.maxWaitingBytes / publish.count
        for _ in 0..<fitting { harness.send(bytes: publish, on: link) }
        #expect(connection.closed == nil)
        harness.send(bytes: publish, on: link)
        #expect(
            connection.closed
                == RecordingConnection.Close(code: .policyViolation, reason: "more than 16777216 bytes of requests waiting"))
        gate.release()
        harness.stop()
    }

    @Test func aDisconnectTellsTheClientWhyThenCloses() async throws {
        let harness = await LinkHarness()
        let (connection, link) = harness.connect()
        let session = try #require(await harness.logIn("alice", on: link)?.loginAccepted?.ticket.session)
        harness.registry.disconnect(session, reason: .sameUidLogin, detail: "logged in elsewhere")
        #expect(connection.frames.last == .closing(reason: .sameUidLogin, detail: "logged in elsewhere"))
        #expect(connection.closed == RecordingConnection.Close(code: .policyViolation, reason: "logged in elsewhere"))
        #expect(harness.registry.caller(on: link) == nil)
        harness.stop()
    }
}
