import Foundation
import Synchronization
import Testing
import SwitchboardCore
import SwitchboardCryptography
import SwitchboardTestKit
@testable import SwitchboardWebhooks

/// A poster that records each attempt and answers as told (by default 204).
final class FakePoster: WebhookPoster {
    private let state = Mutex<(requests: [WebhookRequest], answer: @Sendable (Int, String) -> WebhookPostOutcome)>(([], { _, _ in .answered(status: 204) }))

    /// Answers the n-th attempt (from 1) with `answer(n)`.
    func answering(_ answer: @escaping @Sendable (Int) -> WebhookPostOutcome) { state.withLock { $0.answer = { n, _ in answer(n) } } }

    /// Answers each attempt with `answer(url)`.
    func answeringByURL(_ answer: @escaping @Sendable (String) -> WebhookPostOutcome) { state.withLock { $0.answer = { _, url in answer(url) } } }

    func post(_ request: WebhookRequest) async -> WebhookPostOutcome {
        state.withLock { state in
            state.requests.append(request)
            return state.answer(state.requests.count, request.url)
        }
    }

    var requests: [WebhookRequest] { state.withLock { $0.requests } }
    /// The bodies posted, as JSON objects.
    var events: [[String: Any]] { requests.map { (try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any] ?? [:] } }
    var types: [String] { events.map { $0["type"] as? String ?? "?" } }
}

/// The module alone on a bus with a manual clock: what each bus fact becomes, the signature, the
/// order and retries of a receiver's deliveries, the retry window, the queue's bound, and a queue
/// on disk that outlives the module.
@Suite(.timeLimit(.minutes(1))) struct WebhookModuleTests {
    static let secret = Array("s3cret".utf8)
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))

    func configuration(_ configure: (inout WebhookConfiguration) -> Void = { _ in }) -> WebhookConfiguration {
        var configuration = WebhookConfiguration(targets: [WebhookTarget(url: "http://receiver/hook")], secret: Self.secret)
        configuration.backoff = WebhookBackoff(first: .seconds(1), max: .seconds(60))
        configuration.random = { 0 }
        configure(&configuration)
        return configuration
    }

    func start(
        _ configuration: WebhookConfiguration, queue: any WebhookQueue = InMemoryWebhookQueue(), poster: FakePoster = FakePoster()
    ) async throws -> (ModuleHarness, Webhooks, FakePoster) {
        let webhooks = Webhooks(configuration: configuration, queue: queue, poster: poster)
        let harness = await ModuleHarness(modules: [webhooks])
        try await webhooks.open()
        return (harness, webhooks, poster)
    }

    func statistics(_ harness: ModuleHarness) async throws -> WebhookCounts {
        try await harness.bus.request(WebhookStatistics())
    }

    @Test func everyBusFactBecomesItsSignedDelivery() async throws {
        let (harness, _, poster) = try await start(configuration())
        let room = ChannelKey(app: "app", .message, "room")
        let lock = LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 7)
        let bus = harness.bus
        await bus.publishAndWait(SessionOpened(caller: alice))
        await bus.publishAndWait(SessionOpened(caller: bob))
        await bus.publishAndWait(ChannelJoined(caller: alice, channel: room, features: [.message, .presence]))
        await bus.publishAndWait(ChannelJoined(caller: alice, channel: room, features: [.message]))
        await bus.publishAndWait(ChannelJoined(caller: bob, channel: room, features: [.message, .presence]))
        await bus.publishAndWait(PresenceStateChanged(user: alice.user, channel: room, states: ["mood": "ok"]))
        await bus.publishAndWait(MetadataChanged(target: .channel(room), author: "alice", revision: 3, itemCount: 1))
        await bus.publishAndWait(MetadataChanged(target: .user(bob.user), author: "bob", revision: 4, itemCount: 2))
        for change in LockChange.allCases { await bus.publishAndWait(LockChanged(channel: room, change: change, lock: lock)) }
        let delivery = MessageDelivery(channelType: .user, channelName: "alice", payload: .string("ping"), publisher: "alice", customType: "t", timestamp: 1)
        await bus.publishAndWait(UserMessageUndelivered(publisher: alice, receiver: UserKey("app", "carol"), delivery: delivery))
        await bus.publishAndWait(ChannelLeft(caller: alice, channel: room, reason: .left))
        await bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        await bus.publishAndWait(SessionClosed(caller: bob, reason: .timedOut))
        let expected = [
            "user.online", "user.online", "channel.occupied", "channel.joined", "channel.joined", "presence.state_changed",
            "metadata.changed", "metadata.changed", "lock.acquired", "lock.released", "lock.expired", "lock.revoked",
            "message.offline", "channel.left", "user.offline", "channel.timeout", "channel.vacated", "user.offline",
        ]
        #expect(await eventually { poster.requests.count == expected.count })
        #expect(poster.types == expected)
        let events = poster.events
        #expect(Set(events.compactMap { $0["id"] as? String }).count == expected.count, "one id per event")
        #expect(events.allSatisfy { $0["app"] as? String == "app" && ($0["time"] as? Int ?? 0) == 1_700_000_000_000 })
        #expect(events[3]["user"] as? String == "alice" && events[3]["channel"] as? String == "room" && events[3]["channelType"] as? String == "message")
        #expect(events[5]["states"] as? [String: String] == ["mood": "ok"])
        #expect(events[6]["scope"] as? String == "channel" && events[6]["revision"] as? Int == 3)
        #expect(events[7]["scope"] as? String == "user" && events[7]["user"] as? String == "bob" && events[7]["revision"] as? Int == 4)
        #expect(events[11]["lock"] as? String == "L" && events[11]["owner"] as? String == "alice" && events[11]["fencingToken"] as? Int == 7)
        #expect(events[12]["to"] as? String == "carol" && events[12]["payload"] as? String == "ping" && events[12]["payloadSize"] as? Int == 4)
        #expect(events[13]["reason"] as? String == "left")
        #expect(events[14]["reason"] as? String == "logout" && events[17]["reason"] as? String == "timeout")
        for request in poster.requests {
            let headers = Dictionary(uniqueKeysWithValues: request.headers.map { ($0.name, $0.value) })
            let timestamp = headers["X-Switchboard-Timestamp"] ?? ""
            let mac = CryptoPrimitives.hmacSHA256(key: Self.secret, message: Array("\(timestamp).".utf8) + request.body)
            #expect(headers["X-Switchboard-Signature"] == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
            #expect(timestamp == "1700000000" && headers["Content-Type"] == "application/json")
            #expect(headers["X-Switchboard-Event-Id"] != nil && request.url == "http://receiver/hook")
        }
        #expect(try await statistics(harness).sent == UInt64(expected.count))
        await harness.stop()
    }

    @Test func aReceiverThatFailsThreeTimesGetsItsEventsInOrderAfterTheBackoff() async throws {
        let poster = FakePoster()
        poster.answering { $0 <= 3 ? .answered(status: 503) : .answered(status: 200) }
        let (harness, _, _) = try await start(configuration(), poster: poster)
        await harness.bus.publishAndWait(SessionOpened(caller: alice))
        await harness.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        #expect(await eventually { poster.requests.count == 1 })
        // Waits of 0.5 s, 1 s and 2 s (jitter 0): nothing sooner, and the second event never overtakes the first.
        for (wait, attempts) in [(Duration.milliseconds(500), 2), (.seconds(1), 3), (.seconds(2), 4)] {
            // The last attempt's failure is counted (its retry is due `wait` from then), and the
            // module's ticker sleeps again before the clock moves: otherwise the ticker would miss it.
            #expect(await eventuallyAsync { (try? await statistics(harness).failed) == UInt64(attempts - 1) })
            #expect(await harness.clock.waitForSleepers())
            harness.clock.advance(by: wait - .milliseconds(100))
            try await Task.sleep(for: .milliseconds(20))
            #expect(poster.requests.count == attempts - 1)
            #expect(await harness.clock.waitForSleepers())
            harness.clock.advance(by: .milliseconds(100))
            #expect(await eventually { poster.requests.count >= attempts }, "wait \(wait): \(poster.requests.count) attempts at \(harness.clock.now)")
        }
        #expect(await eventually { poster.requests.count == 5 })
        #expect(poster.types == ["user.online", "user.online", "user.online", "user.online", "user.offline"])
        #expect(Set(poster.events.prefix(4).map { $0["id"] as? String }).count == 1, "a retry keeps its event id")
        let counts = try await statistics(harness)
        #expect(counts.sent == 2 && counts.failed == 3 && counts.queued == 0 && counts.dropped == 0)
        #expect(counts.latency.count == 2)
        await harness.stop()
    }

    @Test func aDeliveryPastItsRetryWindowIsDroppedAndCountedAndTheNextGoesOn() async throws {
        let poster = FakePoster()
        poster.answering { $0 == 1 || $0 == 2 ? .failed("connection refused") : .answered(status: 204) }
        let (harness, _, _) = try await start(configuration { $0.retryWindow = .seconds(1) }, poster: poster)
        await harness.bus.publishAndWait(SessionOpened(caller: alice))
        #expect(await eventually { poster.requests.count == 1 })
        harness.clock.advance(by: .seconds(1))
        #expect(await eventually { poster.requests.count == 2 })
        // The second failure comes after the window: dropped.
        #expect(await eventuallyAsync { (try? await statistics(harness).dropped) == 1 })
        await harness.bus.publishAndWait(SessionOpened(caller: bob))
        #expect(await eventually { poster.requests.count == 3 })
        #expect(poster.events.last?["user"] as? String == "bob")
        let counts = try await statistics(harness)
        #expect(counts.failed == 2 && counts.sent == 1 && counts.queued == 0)
        await harness.stop()
    }

    @Test func receiversGetOnlyTheirAppsAndTheirTypes() async throws {
        let configuration = configuration {
            $0.targets = [WebhookTarget(url: "http://all/", events: [.userOffline])]
            $0.appTargets = ["other": [WebhookTarget(url: "http://other/", secret: Array("own".utf8))]]
        }
        let (harness, _, poster) = try await start(configuration)
        let carol = Caller(app: "other", userId: "carol", session: SessionID(3))
        await harness.bus.publishAndWait(SessionOpened(caller: alice))
        await harness.bus.publishAndWait(SessionOpened(caller: carol))
        await harness.bus.publishAndWait(SessionClosed(caller: carol, reason: .kickedByServer))
        #expect(await eventually { poster.requests.count == 3 })
        let sent = poster.requests.map { ($0.url, poster.events[poster.requests.firstIndex(of: $0)!]["type"] as? String ?? "") }
        #expect(sent.filter { $0.0 == "http://all/" }.map(\.1) == ["user.offline"])
        #expect(sent.filter { $0.0 == "http://other/" }.map(\.1) == ["user.online", "user.offline"])
        #expect(poster.events.allSatisfy { $0["app"] as? String == "other" }, "alice's app has no receiver of user.online")
        let own = poster.requests.first { $0.url == "http://other/" }!
        let headers = Dictionary(uniqueKeysWithValues: own.headers.map { ($0.name, $0.value) })
        let mac = CryptoPrimitives.hmacSHA256(key: Array("own".utf8), message: Array("\(headers["X-Switchboard-Timestamp"]!).".utf8) + own.body)
        #expect(headers["X-Switchboard-Signature"] == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
        await harness.stop()
    }

    @Test func replacedReceiversTakeTheNewEventsAndTheWaitingDeliveriesOfTheOldAreDropped() async throws {
        let poster = FakePoster()
        poster.answeringByURL { $0 == "http://receiver/hook" ? .failed("down") : .answered(status: 204) }
        let (harness, _, _) = try await start(configuration(), poster: poster)
        await harness.bus.publishAndWait(SessionOpened(caller: alice))
        await harness.bus.publishAndWait(SessionOpened(caller: bob))
        // The old receiver's first attempt failed: both deliveries wait for its retry.
        #expect(await eventuallyAsync { (try? await statistics(harness)).map { $0.failed == 1 && $0.queued == 2 } == true })

        let newSecret = Array("n3w".utf8)
        let replaced = try await harness.bus.request(
            ReplaceWebhookReceivers(everyApp: [], perApp: ["app": ["http://new/hook"], "other": []], secret: newSecret))
        #expect(replaced == WebhookReceiversReplaced(givenUp: 2))
        await harness.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        func sentToNew() -> [WebhookRequest] { poster.requests.filter { $0.url == "http://new/hook" } }
        #expect(await eventually { sentToNew().count == 1 })
        let headers = Dictionary(uniqueKeysWithValues: sentToNew()[0].headers.map { ($0.name, $0.value) })
        let mac = CryptoPrimitives.hmacSHA256(key: newSecret, message: Array("\(headers["X-Switchboard-Timestamp"]!).".utf8) + sentToNew()[0].body)
        #expect(headers["X-Switchboard-Signature"] == "sha256=" + mac.map { String(format: "%02x", $0) }.joined(), "signed with the new secret")

        // Past the old receiver's backoff nothing goes to it; a later event reaches the new one
        // (the positive control: the ticker ran after the clock moved).
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(5))
        await harness.bus.publishAndWait(SessionClosed(caller: bob, reason: .logout))
        #expect(await eventually { sentToNew().count == 2 })
        #expect(poster.requests.filter { $0.url == "http://receiver/hook" }.count == 1)
        #expect(poster.types.suffix(2) == ["user.offline", "user.offline"])
        let counts = try await statistics(harness)
        #expect(counts.dropped == 2 && counts.sent == 2 && counts.queued == 0)
        await harness.stop()
    }

    @Test func anAttemptInFlightToAReplacedReceiverIsDroppedOnceWhateverItsAnswer() async throws {
        let poster = HeldPoster()
        let webhooks = Webhooks(configuration: configuration(), queue: InMemoryWebhookQueue(), poster: poster)
        let harness = await ModuleHarness(modules: [webhooks])
        try await webhooks.open()
        await harness.bus.publishAndWait(SessionOpened(caller: alice))
        #expect(await eventually { poster.isHolding })
        let replaced = await webhooks.replaceReceivers(everyApp: ["http://new/hook"], perApp: [:], secret: Self.secret)
        #expect(replaced.givenUp == 1)
        poster.release(.answered(status: 204))
        await harness.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        #expect(await eventuallyAsync {
            let queued = try? await statistics(harness).queued
            return poster.urls.count == 2 && queued == 0
        })
        #expect(poster.urls == ["http://receiver/hook", "http://new/hook"])
        let counts = try await statistics(harness)
        #expect(counts.dropped == 1 && counts.sent == 1, "the late answer of the replaced receiver counts nothing more")
        await harness.stop()
    }

    @Test func anOfflineMessagesPayloadIsLeftOutWhenOnlyItsSizeIsWanted() async throws {
        let (harness, _, poster) = try await start(configuration { $0.messageContent = .size })
        let delivery = MessageDelivery(channelType: .user, channelName: "alice", payload: .binary([1, 2, 3]), publisher: "alice", customType: "", timestamp: 1)
        await harness.bus.publishAndWait(UserMessageUndelivered(publisher: alice, receiver: UserKey("app", "bob"), delivery: delivery))
        #expect(await eventually { poster.requests.count == 1 })
        #expect(poster.events[0]["payloadSize"] as? Int == 3 && poster.events[0]["payload"] == nil)
        await harness.stop()
    }

    @Test func aFullQueueDropsNewEventsAndCountsThem() async throws {
        let poster = FakePoster()
        poster.answering { _ in .failed("down") }
        let (harness, _, _) = try await start(configuration { $0.maxQueued = 2 }, poster: poster)
        for user in 1...5 { await harness.bus.publishAndWait(SessionOpened(caller: Caller(app: "app", userId: "u\(user)", session: SessionID(UInt64(user))))) }
        #expect(await eventuallyAsync { (try? await statistics(harness)) == WebhookCounts(queued: 2, enqueued: 2, sent: 0, failed: 1, dropped: 3) })
        await harness.stop()
    }

    @Test func deliveriesBeingWrittenCountAgainstTheQueuesBound() async throws {
        let poster = FakePoster()
        poster.answering { _ in .failed("down") }
        let queue = HeldWebhookQueue()
        let (harness, _, _) = try await start(configuration { $0.maxQueued = 2 }, queue: queue, poster: poster)
        func opened(_ user: Int) -> SessionOpened { SessionOpened(caller: Caller(app: "app", userId: "u\(user)", session: SessionID(UInt64(user)))) }
        await harness.bus.publishAndWait(opened(1))
        // u1's delivery is being written (neither staged nor lined up) while four more events come.
        #expect(await eventually { queue.writesStarted == 1 })
        for user in 2...5 { await harness.bus.publishAndWait(opened(user)) }
        queue.release()
        #expect(await eventuallyAsync { (try? await statistics(harness)) == WebhookCounts(queued: 2, enqueued: 2, sent: 0, failed: 1, dropped: 3) })
        await harness.stop()
    }

    @Test func deliveriesWaitingOnDiskAreSentByTheNextRunInOrder() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let down = FakePoster()
        down.answering { _ in .failed("down") }
        let twoReceivers = configuration { $0.targets.append(WebhookTarget(url: "http://gone/")) }
        let (first, _, _) = try await start(twoReceivers, queue: SQLiteWebhookQueue(directory: directory.path), poster: down)
        for user in 1...5 { await first.bus.publishAndWait(SessionOpened(caller: Caller(app: "app", userId: "u\(user)", session: SessionID(UInt64(user))))) }
        #expect(await eventuallyAsync { (try? await statistics(first).queued) == 10 })
        await first.stop()

        // The next run no longer has http://gone/: its five are given up; the others arrive in order.
        let (second, _, poster) = try await start(configuration(), queue: SQLiteWebhookQueue(directory: directory.path))
        #expect(await eventually { poster.requests.count == 5 })
        #expect(poster.events.map { $0["user"] as? String } == (1...5).map { "u\($0)" })
        #expect(try await statistics(second).dropped == 5)
        await second.stop()
        let (third, _, idle) = try await start(configuration(), queue: SQLiteWebhookQueue(directory: directory.path))
        try await Task.sleep(for: .milliseconds(50))
        #expect(idle.requests.isEmpty, "what was taken is not sent again")
        #expect(try await statistics(third).queued == 0)
        await third.stop()
    }
}

/// A queue whose writes wait until `release()`: events can arrive while a write is under way.
final class HeldWebhookQueue: WebhookQueue {
    private let stored = InMemoryWebhookQueue()
    private let gate = Mutex<(held: Bool, waiting: [CheckedContinuation<Void, Never>], started: Int)>((true, [], 0))

    /// How many writes have begun (held or not).
    var writesStarted: Int { gate.withLock { $0.started } }

    func open() async throws(WebhookQueueFailure) -> [QueuedDelivery] { try await stored.open() }

    func write(adding deliveries: [QueuedDelivery], removing removed: [Int64]) async throws(RtmError) {
        await withCheckedContinuation { continuation in
            let goOn = gate.withLock { gate in
                gate.started += 1
                if gate.held { gate.waiting.append(continuation) }
                return !gate.held
            }
            if goOn { continuation.resume() }
        }
        try await stored.write(adding: deliveries, removing: removed)
    }

    /// Lets the held writes, and every later one, go on.
    func release() {
        let waiting = gate.withLock { gate in
            gate.held = false
            defer { gate.waiting = [] }
            return gate.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func close() async {}
}


/// A poster whose first attempt waits for `release(_:)`; the others are answered 204 at once.
final class HeldPoster: WebhookPoster {
    private let state = Mutex<(urls: [String], held: CheckedContinuation<WebhookPostOutcome, Never>?)>(([], nil))

    /// The receivers of the attempts so far.
    var urls: [String] { state.withLock { $0.urls } }
    /// Whether the first attempt waits.
    var isHolding: Bool { state.withLock { $0.held != nil } }

    func post(_ request: WebhookRequest) async -> WebhookPostOutcome {
        let first = state.withLock { state in
            state.urls.append(request.url)
            return state.urls.count == 1
        }
        guard first else { return .answered(status: 204) }
        return await withCheckedContinuation { continuation in state.withLock { $0.held = continuation } }
    }

    /// Ends the waiting attempt with `outcome`.
    func release(_ outcome: WebhookPostOutcome) {
        let held = state.withLock { state in
            defer { state.held = nil }
            return state.held
        }
        held?.resume(returning: outcome)
    }
}

/// A queue another node's deliveries can be handed to, as the cluster's queue is when a node dies.
final class HandingWebhookQueue: WebhookQueue {
    let stored = InMemoryWebhookQueue()
    private let handed = Mutex<[QueuedDelivery]>([])
    private let signal = AsyncStream<Void>.makeStream()

    func open() async throws(WebhookQueueFailure) -> [QueuedDelivery] { try await stored.open() }
    func write(adding deliveries: [QueuedDelivery], removing removed: [Int64]) async throws(RtmError) {
        try await stored.write(adding: deliveries, removing: removed)
    }
    func close() async {}

    /// Hands `deliveries` over, as a reaper moving a dead node's queue here does.
    func hand(_ deliveries: [QueuedDelivery]) {
        handed.withLock { $0 += deliveries }
        signal.continuation.yield()
    }

    /// Handed and not yet kept.
    var waiting: Int { handed.withLock { $0.count } }

    func adopted() async throws(RtmError) -> [QueuedDelivery] { handed.withLock { $0 } }
    func keepAdopted(_ deliveries: [QueuedDelivery]) async throws(RtmError) {
        handed.withLock { $0.removeFirst(deliveries.count) }
        try await stored.write(adding: deliveries, removing: [])
    }
    var adoptions: AsyncStream<Void>? { signal.stream }
}

extension WebhookModuleTests {
    @Test func deliveriesHandedOverFromAnotherNodesQueueAreSentInTheirOrderAfterOneOwnAndRemovedOnceTaken() async throws {
        let queue = HandingWebhookQueue()
        let (harness, _, poster) = try await start(configuration(), queue: queue)
        await harness.bus.publishAndWait(SessionOpened(caller: alice))
        #expect(await eventually { poster.requests.count == 1 })
        // Numbered 1…3 by the dead node, as this module numbered its own: renumbered here.
        let other = Array(#"{"id":"other"}"#.utf8)
        queue.hand((1...3).map { index in
            QueuedDelivery(
                sequence: Int64(index), eventId: "dead-\(index)", target: index == 2 ? "http://gone/" : "http://receiver/hook",
                body: other + [UInt8(ascii: "0") + UInt8(index)], created: WallClockTime(millisecondsSince1970: 1_000))
        })
        #expect(await eventually { poster.requests.count == 3 })
        await harness.bus.publishAndWait(SessionOpened(caller: bob))
        #expect(await eventually { poster.requests.count == 4 })
        let ids = poster.requests.map { $0.headers.first { $0.name == "X-Switchboard-Event-Id" }?.value ?? "" }
        #expect(Array(ids[1...2]) == ["dead-1", "dead-3"], "handed over in their order, the unknown receiver's given up")
        #expect(poster.requests[1].body == other + [UInt8(ascii: "1")])
        #expect(queue.waiting == 0)
        #expect(await eventuallyAsync { (try? await statistics(harness)).map { $0.queued == 0 && $0.dropped == 1 && $0.sent == 4 } ?? false })
        #expect(await eventually { queue.stored.count == 0 }, "what was taken is removed")
        await harness.stop()
    }
}
