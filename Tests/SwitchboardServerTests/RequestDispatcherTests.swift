import Synchronization
import Testing
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardWire

@testable import SwitchboardServer

/// How one connection's requests are answered: login first, in order, within the call budget,
/// malformed frames answered, all as a client reads the frames it is sent.
@Suite(.timeLimit(.minutes(2))) struct RequestDispatcherTests {
    @Test func aRequestBeforeLoginIsRefusedWithNotLogin() async {
        let harness = await LinkHarness()
        let (connection, link) = harness.connect()
        harness.send(.subscribe(id: 4, channel: "room", features: .message), on: link)
        guard case .error(4, let error)? = await connection.answer(to: 4) else {
            Issue.record("expected an error answer, got \(connection.frames)")
            return
        }
        #expect(error.code == .notLogin)
        #expect(error.code.rawValue == -10002)
        #expect(error.operation == "subscribe")
        // The same request after a login is carried out.
        #expect(await harness.logIn("alice", id: 5, on: link)?.loginAccepted != nil)
        harness.send(.subscribe(id: 6, channel: "room", features: .message), on: link)
        #expect(await connection.answer(to: 6) == .answer(id: 6, .done))
        harness.stop()
    }

    @Test func aLoginBindsTheCallerToTheLink() async throws {
        let router = FakeMessageRouter()
        let harness = await LinkHarness(modules: [FakeSessions(), router])
        let (connection, link) = harness.connect()
        #expect(harness.registry.caller(on: link) == nil)
        guard let accepted = await harness.logIn("alice", on: link)?.loginAccepted else {
            Issue.record("expected loginOk, got \(connection.frames)")
            return
        }
        let caller = try #require(harness.registry.caller(on: link))
        #expect(caller.userId == "alice")
        #expect(caller.session == accepted.ticket.session)
        // Later requests are carried out for that caller.
        harness.send(.publish(id: 2, channelType: .message, channel: "room", message: .string("hi")), on: link)
        #expect(await connection.answer(to: 2) == .answer(id: 2, .done))
        #expect(router.published.map(\.caller) == [caller])
        harness.stop()
    }

    @Test func aSecondLoginOnTheSameLinkIsRefused() async {
        let harness = await LinkHarness()
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", id: 1, on: link)?.loginAccepted != nil)
        let session = harness.registry.caller(on: link)?.session
        guard case .error(2, let error)? = await harness.logIn("bob", id: 2, on: link) else {
            Issue.record("expected an error answer, got \(connection.frames)")
            return
        }
        #expect(error.code == .duplicateOperation)
        #expect(error.operation == "login")
        #expect(harness.registry.caller(on: link)?.userId == "alice")
        #expect(harness.registry.caller(on: link)?.session == session)
        harness.stop()
    }

    @Test func requestsAreAnsweredInTheOrderSent() async {
        let harness = await LinkHarness()
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        let ids: [UInt32] = Array(10..<70)
        for id in ids {
            switch id % 3 {
            case 0: harness.send(.subscribe(id: id, channel: "room-\(id)", features: .message), on: link)
            case 1: harness.send(.publish(id: id, channelType: .message, channel: "room", message: .string("\(id)")), on: link)
            default: harness.send(ClientFrame(id: id, .session(.heartbeat)), on: link)
            }
        }
        let frames = await connection.frames(count: 1 + ids.count)
        #expect(frames.dropFirst().map(\.requestId) == ids.map { $0 })
        #expect(frames.dropFirst().allSatisfy { if case .answer(_, .done) = $0 { true } else { false } })
        harness.stop()
    }

    @Test func publishesPastTheRateBudgetAreRefusedWithItsCode() async throws {
        let router = FakeMessageRouter()
        let limits = Limits()
        let harness = await LinkHarness(limits: limits, modules: [FakeSessions(), router])
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        let budget = try #require(limits.messages.publishesPerSecondPerClient)
        // The manual clock stands still: every publish falls in the same second.
        let ids = (0...UInt32(budget)).map { 100 + $0 }
        for id in ids {
            harness.send(.publish(id: id, channelType: .message, channel: "room", message: .string("m")), on: link)
        }
        let frames = await connection.frames(count: 1 + ids.count)
        let answers = frames.dropFirst()
        #expect(answers.dropLast().allSatisfy { if case .answer(_, .done) = $0 { true } else { false } })
        guard case .error(let id, let error)? = answers.last else {
            Issue.record("expected the last publish refused, got \(String(describing: answers.last))")
            return
        }
        #expect(id == ids.last)
        #expect(error.code.rawValue == -10021)
        #expect(error.operation == "publish")
        #expect(router.published.count == budget)
        // A second later the budget is there again.
        harness.clock.advance(by: .seconds(1))
        harness.send(.publish(id: 999, channelType: .message, channel: "room", message: .string("m")), on: link)
        #expect(await connection.answer(to: 999) == .answer(id: 999, .done))
        #expect(router.published.count == budget + 1)
        harness.stop()
    }

    @Test func aPublishTriedAtOnceThatMustWaitPaysItsRateBudgetOnce() async throws {
        let limits = Limits()
        let harness = await LinkHarness(limits: limits, modules: [FakeSessions(), PublisherThatAlwaysWaits()])
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        let budget = try #require(limits.messages.publishesPerSecondPerClient)
        // Every publish is tried at once (its budget taken), then carried out later: the budget
        // still admits `budget` of them in the clock's one second, and refuses the next.
        let ids = (0...UInt32(budget)).map { 100 + $0 }
        for id in ids {
            harness.send(.publish(id: id, channelType: .user, channel: "bob", message: .string("m")), on: link)
        }
        let answers = await connection.frames(count: 1 + ids.count).dropFirst()
        #expect(answers.dropLast().allSatisfy { if case .answer(_, .done) = $0 { true } else { false } })
        guard case .error(ids.last, let error)? = answers.last else {
            Issue.record("expected the last publish refused, got \(String(describing: answers.last))")
            return
        }
        #expect(error.code == .operationRateExceedLimitation)
        harness.stop()
    }

    @Test(arguments: [true, false]) func aPublishReadInPlacePaysItsRateBudgetOnceWhoeverAnswersIt(inPlace: Bool) async throws {
        let limits = Limits()
        let publisher = InPlacePublisher(answersInPlace: inPlace)
        let harness = await LinkHarness(limits: limits, modules: [FakeSessions(), publisher])
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        let budget = try #require(limits.messages.publishesPerSecondPerClient)
        func publish(_ id: UInt32) {
            harness.send(.publish(id: id, channelType: .user, channel: "bob", message: .binary([1, 2]), customType: "k"), on: link)
        }
        // The first request after a login goes through the link's request loop (it tells the
        // session of a sign of life); the rest are answered as they arrive.
        publish(99)
        #expect(await connection.answer(to: 99) == .answer(id: 99, .done))
        // Each is offered in place first (its budget taken); one left there goes on to `Publish`
        // without paying again, so `budget` publishes pass in the clock's second either way.
        let ids = (1...UInt32(budget)).map { 100 + $0 }
        for id in ids { publish(id) }
        let answers = await connection.frames(count: 2 + ids.count).dropFirst(2)
        #expect(answers.dropLast().allSatisfy { if case .answer(_, .done) = $0 { true } else { false } })
        guard case .error(ids.last, let error)? = answers.last else {
            Issue.record("expected the last publish refused, got \(String(describing: answers.last))")
            return
        }
        #expect(error.code == .operationRateExceedLimitation)
        let counts = publisher.counts
        #expect(counts.offered == budget - 1)
        #expect(counts.inPlace == (inPlace ? budget - 1 : 0))
        #expect(counts.owned == (inPlace ? 1 : budget))
        #expect(counts.lastCustomType == "k")
        harness.stop()
    }

    /// A harness whose publishes `InPlacePublisher` answers in place, with alice logged in and a
    /// first publish made with `publish` (id 99) answered: the first request after a login goes
    /// through the request loop, the next ones may be answered at once.
    private func aliceAnsweredInPlace(
        _ publish: (UInt32) -> [UInt8]
    ) async -> (InPlacePublisher, LinkHarness, RecordingConnection, ClientLink<RecordingConnection>) {
        let publisher = InPlacePublisher(answersInPlace: true)
        let harness = await LinkHarness(limits: Limits(), modules: [FakeSessions(), publisher])
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        harness.send(bytes: publish(99), on: link)
        #expect(await connection.answer(to: 99) == .answer(id: 99, .done))
        return (publisher, harness, connection, link)
    }

    @Test func theFramesOfOneReadAreStampedByOneReadingOfTheClockAndCountedWhenItEnds() async throws {
        func publish(_ id: UInt32) -> [UInt8] {
            ClientFrame.publish(id: id, channelType: .user, channel: "bob", message: .string("hi")).encode()
        }
        let (publisher, harness, connection, link) = await aliceAnsweredInPlace(publish)
        let metrics = harness.dispatcher.metrics
        let (acceptedBefore, usersBefore) = (metrics.answeredAtOnce.succeeded, metrics.publishCount(.user))
        // One read of two frames, the clock moving between them; then a read of one.
        let readAt = harness.clock.wallMilliseconds
        publish(1).withUnsafeBytes { harness.hub.received($0, on: link) }
        harness.clock.advance(by: .milliseconds(7))
        publish(2).withUnsafeBytes { harness.hub.received($0, on: link) }
        harness.dispatcher.readEnded(on: link)
        #expect(metrics.answeredAtOnce.succeeded == acceptedBefore + 2)
        #expect(metrics.publishCount(.user) == usersBefore + 2)
        harness.send(bytes: publish(3), on: link)
        #expect(await connection.frames(count: 5).suffix(3) == [.answer(id: 1, .done), .answer(id: 2, .done), .answer(id: 3, .done)])
        #expect(publisher.counts.readAt == [readAt, readAt, readAt + 7])
        #expect(metrics.answeredAtOnce.succeeded == acceptedBefore + 3)
        harness.stop()
    }

    @Test func aReadCutShortByACloseStillCountsWhatItAnswered() async throws {
        func publish(_ id: UInt32) -> [UInt8] {
            ClientFrame.publish(id: id, channelType: .message, channel: "room", message: .string("hi")).encode()
        }
        let (_, harness, connection, link) = await aliceAnsweredInPlace(publish)
        let metrics = harness.dispatcher.metrics
        let before = metrics.publishCount(.message)
        // A frame answered at once, then the connection closes before its read ends.
        publish(1).withUnsafeBytes { harness.hub.received($0, on: link) }
        harness.hub.closed(connection.id, code: .protocolError, reason: "a bad frame after it")
        #expect(metrics.publishCount(.message) == before + 1)
        harness.stop()
    }

    @Test func aFrameThatFailsToDecodeIsAnsweredAndTheLinkStaysUsable() async {
        let harness = await LinkHarness()
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        // A publish without its channel: the id and type were read, so the error answers them.
        var writer = MessagePackWriter()
        writer.writeMapHeader(2)
        writer.writeString("t"); writer.writeString("publish")
        writer.writeString("id"); writer.writeUInt(7)
        harness.send(bytes: writer.bytes, on: link)
        guard case .error(7, let error)? = await connection.answer(to: 7) else {
            Issue.record("expected an error answer to 7, got \(connection.frames)")
            return
        }
        #expect(error.code == .invalidParameter)
        #expect(error.operation == "publish")
        // Bytes that are no frame at all are answered with id 0.
        harness.send(bytes: [0xc1], on: link)
        guard case .error(0, let garbage)? = await connection.answer(to: 0) else {
            Issue.record("expected an error answer to 0, got \(connection.frames)")
            return
        }
        #expect(garbage.code == .invalidParameter)
        #expect(garbage.operation == "")
        // The link still answers, and is still open.
        harness.send(ClientFrame(id: 8, .session(.heartbeat)), on: link)
        #expect(await connection.answer(to: 8) == .answer(id: 8, .done))
        #expect(connection.closed == nil)
        harness.stop()
    }

    @Test func aLogoutIsAnsweredThenTheConnectionClosesNormally() async {
        let harness = await LinkHarness()
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        harness.send(ClientFrame(id: 2, .session(.logout)), on: link)
        #expect(await connection.awaitClose() == RecordingConnection.Close(code: .normalClosure, reason: "logged out"))
        #expect(connection.frames.last == .answer(id: 2, .done))
        harness.stop()
    }

    // MARK: Publishes started (a user's message forwarded to another node)

    /// A harness whose publishes to users are started and held by the returned forwarder, with
    /// alice logged in on the returned link.
    private func loggedInWithForwarder(limits: Limits = Limits()) async
        -> (ForwarderThatHoldsReplies, LinkHarness, RecordingConnection, ClientLink<RecordingConnection>)
    {
        let forwarder = ForwarderThatHoldsReplies()
        let harness = await LinkHarness(limits: limits, modules: [FakeSessions(), forwarder])
        let (connection, link) = harness.connect()
        #expect(await harness.logIn("alice", on: link)?.loginAccepted != nil)
        return (forwarder, harness, connection, link)
    }

    /// Publishes `text` to bob's user channel as request `id`, as alice.
    private func sendToBob(_ id: UInt32, _ harness: LinkHarness, on link: ClientLink<RecordingConnection>, text: String = "m") {
        harness.send(.publish(id: id, channelType: .user, channel: "bob", message: .string(text)), on: link)
    }

    @Test func severalPublishesAreStartedAtOnceAndTheLinkGoesOnMeanwhile() async throws {
        let (forwarder, harness, connection, link) = await loggedInWithForwarder()
        let ids: [UInt32] = Array(10..<15)
        for id in ids {
            sendToBob(id, harness, on: link, text: "\(id)")
        }
        // All of them are on their way together, none answered yet.
        #expect(await eventually { forwarder.held == ids.count })
        // A message-channel publish behind them is answered meanwhile.
        harness.send(.publish(id: 20, channelType: .message, channel: "room", message: .string("m")), on: link)
        #expect(await connection.answer(to: 20) == .answer(id: 20, .done))
        #expect(!connection.frames.contains { ids.contains($0.requestId ?? 0) })
        // Each is answered when its reply comes, in the order the replies come.
        forwarder.releaseAll(.success(Done()))
        let answers = await connection.frames(count: 2 + ids.count).filter { ids.contains($0.requestId ?? 0) }
        #expect(answers == ids.map { .answer(id: $0, .done) })
        #expect(forwarder.startedMessages == ids.map { "\($0)" })
        harness.stop()
    }

    @Test func aRequestOtherThanAPublishIsCarriedOutAfterTheStartedOnesAreAnswered() async throws {
        let (forwarder, harness, connection, link) = await loggedInWithForwarder()
        sendToBob(10, harness, on: link)
        #expect(await eventually { forwarder.held == 1 })
        harness.send(.subscribe(id: 11, channel: "room", features: .message), on: link)
        // Give a subscribe that did not wait the time to be answered.
        try await Task.sleep(for: .milliseconds(100))
        #expect(connection.frames.last?.requestId == 1)
        forwarder.releaseAll(.success(Done()))
        let answers = await connection.frames(count: 3).dropFirst()
        #expect(answers.map(\.requestId) == [10, 11])
        harness.stop()
    }

    @Test func aStartedPublishThatFailsIsAnsweredWithItsError() async throws {
        let (forwarder, harness, connection, link) = await loggedInWithForwarder()
        sendToBob(10, harness, on: link)
        #expect(await eventually { forwarder.held == 1 })
        forwarder.releaseAll(.failure(RtmError(.channelPublishMessageTimeout, operation: "publish", reason: "Redis is down")))
        guard case .error(10, let error)? = await connection.answer(to: 10) else {
            Issue.record("expected an error answer to 10, got \(connection.frames)")
            return
        }
        #expect(error.code == .channelPublishMessageTimeout)
        #expect(error.operation == "publish")
        harness.stop()
    }

    @Test func aLinkHasAtMostItsLimitOfPublishesStarted() async throws {
        var limits = Limits()
        limits.messages.publishesPerSecondPerClient = nil
        let (forwarder, harness, connection, link) = await loggedInWithForwarder(limits: limits)
        let limit = ClientLink<RecordingConnection>.maxStarted
        for id in 0...UInt32(limit) {
            sendToBob(100 + id, harness, on: link, text: "\(id)")
        }
        #expect(await eventually { forwarder.held == limit })
        try await Task.sleep(for: .milliseconds(100))
        #expect(forwarder.held == limit)
        // One answered makes room for the one that waited.
        forwarder.releaseFirst(.success(Done()))
        #expect(await eventually { forwarder.startedMessages.count == limit + 1 })
        #expect(forwarder.startedMessages.last == "\(limit)")
        forwarder.releaseAll(.success(Done()))
        #expect(await connection.frames(count: 2 + limit).count == 2 + limit)
        harness.stop()
    }
}

/// A publish handler that answers message-channel publishes at once and starts user-channel
/// ones, holding their replies until the test releases them (as Redis's replies to forwards).
private final class ForwarderThatHoldsReplies: Module, Sendable {
    let name = "forwarder-that-holds-replies"
    private let state = Mutex<(replies: [Reply<Publish>], started: [String])>(([], []))

    func start(_ context: ModuleContext) async {
        context.bus.handleAtOnceOrStarting(
            Publish.self, atOnce: { request in request.channelType == .user ? nil : Done() },
            start: { [self] request, reply in
                state.withLock {
                    $0.replies.append(reply)
                    if case .string(let text) = request.payload { $0.started.append(text) }
                }
            })
    }

    /// Replies started and not released yet.
    var held: Int { state.withLock { $0.replies.count } }
    /// The started messages' texts, in the order they were started.
    var startedMessages: [String] { state.withLock { $0.started } }

    func releaseAll(_ result: Result<Done, RtmError>) {
        let replies = state.withLock { state in
            defer { state.replies = [] }
            return state.replies
        }
        for reply in replies { reply(result) }
    }

    func releaseFirst(_ result: Result<Done, RtmError>) {
        let reply = state.withLock { $0.replies.removeFirst() }
        reply(result)
    }
}

/// A publish handler that answers nothing at once: every publish waits (as one forwarded to
/// another node does).
private struct PublisherThatAlwaysWaits: Module {
    let name = "publisher-that-always-waits"

    func start(_ context: ModuleContext) async {
        context.bus.handleAtOnceWhenPossible(
            Publish.self, atOnce: { _ in nil }, later: { _ in Done() })
    }
}

/// A publisher offered every publish in place: it answers them there (`answersInPlace`) or
/// leaves them to `Publish`, which it answers at once; it counts which way each went.
private final class InPlacePublisher: Module, Sendable {
    let name = "in-place-publisher"
    let answersInPlace: Bool
    struct Counts {
        var offered = 0
        var inPlace = 0
        var owned = 0
        var lastCustomType = ""
        /// When the server read each publish offered in place (`receivedAt`).
        var readAt: [UInt64] = []
    }
    private let state = Mutex(Counts())
    var counts: Counts { state.withLock { $0 } }

    init(answersInPlace: Bool) { self.answersInPlace = answersInPlace }

    func start(_ context: ModuleContext) async {
        context.bus.handleInPlace(PublishInPlace.self) { [self] request in
            let customType = String(copyingUTF8: request.customType)
            return state.withLock { counts in
                counts.offered += 1
                counts.lastCustomType = customType
                counts.readAt.append(request.receivedAt)
                guard answersInPlace else { return nil }
                counts.inPlace += 1
                return Done()
            }
        }
        context.bus.handleImmediately(Publish.self) { [self] _ in
            state.withLock { $0.owned += 1 }
            return Done()
        }
    }
}
