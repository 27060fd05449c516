import Testing
import Synchronization
import SwitchboardCore
import SwitchboardTestKit

private struct Tick: BusEvent, Hashable { let value: Int }
private struct Other: BusEvent, Hashable {}
/// A distinct event type for every `Tag`.
private struct Tagged<Tag>: BusEvent {}
private struct Doubler: BusRequest {
    typealias Response = Int
    static let operation = "double"
    let value: Int
}

@Suite(.timeLimit(.minutes(2))) struct EventBusTests {
    @Test func eventsArriveInPublishOrderAtEverySubscriber() async {
        let bus = EventBus()
        let first = EventRecorder(), second = EventRecorder()
        first.record(Tick.self, on: bus)
        second.record(Tick.self, on: bus)
        for value in 0..<500 { bus.publish(Tick(value: value)) }
        bus.publish(Other())
        #expect(await first.waitFor(Tick.self, count: 500).map(\.value) == Array(0..<500))
        #expect(await second.waitFor(Tick.self, count: 500).map(\.value) == Array(0..<500))
        #expect(first.events(of: Other.self).isEmpty)
    }

    @Test func oneSubscriptionSeesEveryTypeInPublishOrder() async {
        let bus = EventBus()
        let seen = Mutex<[String]>([])
        let subscription = bus.subscription()
            .on(Tick.self) { event in
                // A slow handler must not let the next event of another type overtake it.
                try? await Task.sleep(for: .milliseconds(1))
                seen.withLock { $0.append("tick \(event.value)") }
            }
            .on(Other.self) { _ in seen.withLock { $0.append("other") } }
        for value in 0..<5 {
            bus.publish(Tick(value: value))
            bus.publish(Other())
        }
        await bus.publishAndWait(Other())
        #expect(seen.withLock { $0 } == (0..<5).flatMap { ["tick \($0)", "other"] } + ["other"])
        subscription.cancel()
    }

    @Test func aClosedBusDeliversWhatWasPublishedAndNothingAfter() async throws {
        let bus = EventBus()
        let recorder = EventRecorder()
        recorder.record(Tick.self, on: bus)
        bus.handle(Doubler.self) { $0.value * 2 }
        bus.publish(Tick(value: 1))
        bus.close()
        bus.publish(Tick(value: 2))
        #expect(await recorder.waitFor(Tick.self).map(\.value) == [1])
        #expect(bus.subscriberCount(of: Tick.self) == 0)
        await #expect(throws: RtmError.self) { try await bus.request(Doubler(value: 1)) }
    }

    @Test func aSubscriptionIsLiveWhenSubscribeReturns() async {
        let bus = EventBus()
        let seen = Mutex<[Int]>([])
        bus.subscribe(Tick.self) { event in seen.withLock { $0.append(event.value) } }
        await bus.publishAndWait(Tick(value: 1))
        #expect(seen.withLock { $0 } == [1])
    }

    @Test func cancelledSubscriptionsReceiveNothing() async {
        let bus = EventBus()
        let seen = Mutex(0)
        let subscription = bus.subscribe(Tick.self) { _ in seen.withLock { $0 += 1 } }
        await bus.publishAndWait(Tick(value: 1))
        subscription.cancel()
        await bus.publishAndWait(Tick(value: 2))
        #expect(seen.withLock { $0 } == 1)
        #expect(bus.subscriberCount(of: Tick.self) == 0)
    }

    @Test func aSubscriptionsAnswerComesAfterEveryEventPublishedBeforeTheRequest() async throws {
        let bus = EventBus()
        let total = Mutex(0)
        bus.subscription()
            .on(Tick.self) { event in
                // Slow handlers: without waiting for them, the answer would be 0.
                try? await Task.sleep(for: .milliseconds(2))
                total.withLock { $0 += event.value }
            }
            .answer(Doubler.self) { request in total.withLock { $0 } * request.value }
        for value in 1...5 { bus.publish(Tick(value: value)) }
        #expect(try await bus.request(Doubler(value: 2)) == 30)
        // Another subscription's backlog does not hold the answer up.
        let (gate, open) = AsyncStream<Void>.makeStream()
        bus.subscribe(Other.self) { _ in for await _ in gate {} }
        bus.publish(Other())
        bus.publish(Tick(value: 10))
        #expect(try await bus.request(Doubler(value: 1)) == 25)
        open.finish()
        bus.close()
    }

    /// A subscriber that handled an event and, because of it, asks another subscription (the
    /// storage module asking the cluster link to listen to a channel someone just joined) gets
    /// an answer given with that event applied, though the publish may still be handing the event
    /// out to the subscribers after it.
    @Test func anAnswerAskedBecauseOfAnEventComesAfterThatEventEvenMidPublish() async throws {
        let bus = EventBus()
        let answers = Mutex<[Bool]>([])
        let rounds = 40
        // The asker is the first subscriber; many others sit between it and the one it asks, so
        // the publish is still handing the event out when the asker has reacted.
        bus.subscribe(Tick.self) { event in
            let seen = (try? await bus.request(Doubler(value: event.value))) == event.value * 2
            answers.withLock { $0.append(seen) }
        }
        for _ in 0..<2_000 { bus.subscribe(Tick.self) { _ in } }
        let lastSeen = Mutex(0)
        bus.subscription()
            .on(Tick.self) { event in lastSeen.withLock { $0 = event.value } }
            .answer(Doubler.self) { request in lastSeen.withLock { $0 } == request.value ? request.value * 2 : -1 }
        for value in 1...rounds {
            bus.publish(Tick(value: value))
            #expect(await eventually { answers.withLock { $0.count } == value })
        }
        #expect(answers.withLock { $0 } == Array(repeating: true, count: rounds))
        bus.close()
    }

    @Test func requestsGoToTheOneHandlerAndCanBeSwapped() async throws {
        let bus = EventBus()
        await #expect(throws: RtmError.self) { try await bus.request(Doubler(value: 2)) }
        bus.handle(Doubler.self) { $0.value * 2 }
        #expect(try await bus.request(Doubler(value: 21)) == 42)
        bus.handle(Doubler.self) { $0.value * 3 }
        #expect(try await bus.request(Doubler(value: 2)) == 6)
        bus.removeHandler(Doubler.self)
        do {
            let answer = try await bus.request(Doubler(value: 1))
            Issue.record("a request after removeHandler was answered: \(answer)")
        } catch {
            #expect(error.code == .serviceNotSupport)
            #expect(error.operation == "double")
        }
    }

    @Test func anImmediateHandlerAnswersBothWaysUntilAnAsynchronousOneReplacesIt() async throws {
        let bus = EventBus()
        var built = 0
        func doubler(_ value: Int) -> Doubler {
            built += 1
            return Doubler(value: value)
        }
        #expect(try bus.answerAtOnce(Doubler.self) { doubler(1) } == nil)
        bus.handleImmediately(Doubler.self) { $0.value * 2 }
        #expect(try bus.answerAtOnce(Doubler.self) { doubler(4) } == 8)
        #expect(try await bus.request(Doubler(value: 5)) == 10)
        // A module swapped in with an ordinary handler is the one every caller reaches; the
        // request is not even built for the immediate path.
        bus.handle(Doubler.self) { $0.value * 3 }
        #expect(try bus.answerAtOnce(Doubler.self) { doubler(6) } == nil)
        #expect(built == 1)
        #expect(try await bus.request(Doubler(value: 5)) == 15)
        // Swapped back, the immediate handler answers; removed, nothing does.
        bus.handleImmediately(Doubler.self) { $0.value * 4 }
        #expect(try bus.answerAtOnce(Doubler.self) { doubler(2) } == 8)
        bus.removeHandler(Doubler.self)
        #expect(try bus.answerAtOnce(Doubler.self) { doubler(2) } == nil)
        // Its refusals reach the caller as thrown errors.
        bus.handleImmediately(Doubler.self) { request throws(RtmError) in
            throw RtmError(.invalidParameter, operation: Doubler.operation, reason: "no \(request.value)")
        }
        #expect(throws: RtmError.self) { try bus.answerAtOnce(Doubler.self) { doubler(3) } }
    }

    @Test func aStartingHandlerAnswersAtOnceOrStartsAndRepliesLaterEveryWay() async throws {
        let bus = EventBus()
        let held = Mutex<[(value: Int, reply: Reply<Doubler>)]>([])
        // Even values answered at once; odd ones started, their replies held until released.
        bus.handleAtOnceOrStarting(
            Doubler.self, atOnce: { $0.value % 2 == 0 ? $0.value * 2 : nil },
            start: { request, reply in held.withLock { $0.append((request.value, reply)) } })
        let replies = Mutex<[Int: Int]>([:])
        var made = 0
        func outcome(_ value: Int) throws(RtmError) -> ImmediateOutcome<Int> {
            try bus.answerAtOnceOrStart(Doubler.self, { Doubler(value: value) }) {
                made += 1
                return { result in replies.withLock { $0[value] = try? result.get() } }
            }
        }
        guard case .answered(8) = try outcome(4) else { Issue.record("4 not answered at once"); return }
        for value in [1, 3, 5] {
            guard case .started = try outcome(value) else { Issue.record("\(value) not started"); return }
        }
        // A reply is made for each started request only, and nothing answered before its release.
        #expect(made == 3)
        #expect(held.withLock { $0.map(\.value) } == [1, 3, 5])
        #expect(replies.withLock { $0.isEmpty })
        // `start` answers at once on the caller's thread too, and starts the rest the same way.
        bus.start(Doubler(value: 6)) { result in replies.withLock { $0[6] = try? result.get() } }
        #expect(replies.withLock { $0[6] } == 12)
        bus.start(Doubler(value: 7)) { result in replies.withLock { $0[7] = try? result.get() } }
        #expect(held.withLock { $0.map(\.value) } == [1, 3, 5, 7])
        for (value, reply) in held.withLock({ $0 }) { reply(.success(value * 2)) }
        #expect(replies.withLock { $0 } == [1: 2, 3: 6, 5: 10, 6: 12, 7: 14])
        // An awaiting caller gets the started request's reply.
        async let awaited = bus.request(Doubler(value: 9))
        #expect(await eventually { held.withLock { $0.last?.value } == 9 })
        held.withLock { $0.last?.reply(.success(18)) }
        #expect(try await awaited == 18)
        // A handler without a start is run in a task by `start`; with none, the reply says so.
        bus.handle(Doubler.self) { $0.value * 3 }
        guard case .mustWait = try outcome(1) else { Issue.record("an ordinary handler started"); return }
        let ordinary = Mutex<Int?>(nil)
        bus.start(Doubler(value: 5)) { result in ordinary.withLock { $0 = try? result.get() } }
        #expect(await eventually { ordinary.withLock { $0 } == 15 })
        bus.removeHandler(Doubler.self)
        let missing = Mutex<RtmErrorCode?>(nil)
        bus.start(Doubler(value: 5)) { result in
            if case .failure(let error) = result { missing.withLock { $0 = error.code } }
        }
        #expect(missing.withLock { $0 } == .serviceNotSupport)
    }

    @Test func aLiveListenerCountFollowsEachTypesSubscribersAndObservers() {
        let bus = EventBus()
        // Counts handed out before and after listeners come, for many types, each its own.
        var counters: [(count: () -> Int, live: ListenerCount, listen: () -> BusSubscription)] = []
        func add<T>(_: T.Type, depth: Int) {
            counters.append((
                { bus.subscriberCount(of: Tagged<T>.self) }, bus.listenerCount(of: Tagged<T>.self),
                { bus.subscribe(Tagged<T>.self) { _ in } }))
            if depth > 0 {
                add([T].self, depth: depth - 1)
                add(T?.self, depth: depth - 1)
            }
        }
        add(Int.self, depth: 6)
        #expect(counters.allSatisfy { $0.count() == 0 && $0.live.current == 0 })
        let subscriptions = counters.indices.filter { $0 % 3 == 0 }.map { counters[$0].listen() }
        for (index, counter) in counters.enumerated() {
            #expect(counter.count() == (index % 3 == 0 ? 1 : 0))
            #expect(counter.live.current == counter.count())
        }
        bus.observe(Tagged<Int>.self) { _ in }
        #expect(counters[0].live.current == 2)
        #expect(bus.listenerCount(of: Tagged<Int>.self) === counters[0].live)
        for subscription in subscriptions { subscription.cancel() }
        #expect(counters[0].live.current == 1)
        #expect(counters.dropFirst().allSatisfy { $0.count() == 0 && $0.live.current == 0 })
        bus.close()
        #expect(counters[0].live.current == 0)
    }

    @Test func observersSeeEachEventBeforePublishReturnsInPublishOrder() async {
        let bus = EventBus()
        let seen = Mutex<[Int]>([])
        bus.observe(Tick.self) { event in seen.withLock { $0.append(event.value) } }
        #expect(bus.subscriberCount(of: Tick.self) == 1)
        for value in 0..<3 {
            bus.publish(Tick(value: value))
            #expect(seen.withLock { $0.last } == value)
        }
        await bus.publishAndWait(Tick(value: 3))
        bus.publish(Other())
        #expect(seen.withLock { $0 } == [0, 1, 2, 3])
        bus.close()
        bus.publish(Tick(value: 4))
        #expect(seen.withLock { $0 } == [0, 1, 2, 3])
    }
}

@Suite(.timeLimit(.minutes(2))) struct ManualClockTests {
    @Test func sleepersWakeOnlyWhenTimeIsAdvancedPastTheirDeadline() async throws {
        let clock = ManualClock()
        let tasks = [3, 1, 2].map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                return seconds
            }
        }
        #expect(await clock.waitForSleepers(count: 3))
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 3)
        clock.advance(by: .milliseconds(1001))
        #expect(try await tasks[1].value == 1)
        #expect(try await tasks[2].value == 2)
        #expect(clock.sleeperCount == 1)
        tasks[0].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[0].value }
        #expect(clock.wallMilliseconds == 1_700_000_002_000)
    }
}

@Suite(.timeLimit(.minutes(2))) struct ValidationTests {
    @Test func limitsHaveTheReferenceDefaults() {
        let limits = Limits()
        #expect(limits.messages.payloadMaxBytes == 32_768)
        #expect(limits.messages.customTypeMaxLength == 32)
        #expect(limits.names.channelNameMaxLength == 64)
        #expect(limits.messages.subscribedChannelsPerClient == 50)
        #expect(limits.messages.publishesPerSecondPerClient == 60)
        #expect(limits.sessions.otherCallsPerSecondPerClient == 20)
        #expect(limits.sessions.clampedHeartbeatInterval(1) == 5)
        #expect(limits.sessions.clampedHeartbeatInterval(4000) == 1800)
        #expect(limits.sessions.clampedPresenceTimeout(0) == 300)
        #expect(limits.sessions.clampedPresenceTimeout(2) == 5)
    }

    @Test func errorCodesKeepTheReferenceRawValues() {
        #expect(RtmErrorCode.operationRateExceedLimitation.rawValue == -10021)
        #expect(RtmErrorCode.channelReceiverOffline.rawValue == -11033)
        #expect(RtmErrorCode.invalidUserId.rawValue == -10006)
        #expect(RtmErrorCode.lockNotExist.rawValue == -14008)
        #expect(RtmErrorCode.allCases.count == 100)
        #expect(RtmLinkStateChangeReason.sameUidLogin.rawValue == 27)
        #expect(RtmSubscribeChannelFeature.defaultFeatures.rawValue == 0b101)
        #expect(RtmAreaCode.GLOB.rawValue == 0xFFFF_FFFF)
    }
}

@Suite(.timeLimit(.minutes(2))) struct NameLengthTests {
    @Test func combiningMarksCountAsCharactersSoNamesStaySmall() {
        let limits = Limits()
        let heavy = "a" + String(repeating: "\u{0301}", count: 20_000)
        #expect(heavy.count == 1)
        #expect(throws: RtmError.self) { try Validation.checkChannelName(heavy, limits: limits, operation: "subscribe") }
        #expect(throws: RtmError.self) { try Validation.checkCustomType(heavy, limits: limits, operation: "publish") }
        #expect(throws: Never.self) { try Validation.checkChannelName(String(repeating: "é", count: 64), limits: limits, operation: "subscribe") }
    }

    @Test func secretsCompareByValue() {
        #expect(Validation.constantTimeEquals("abc", "abc"))
        #expect(!Validation.constantTimeEquals("abc", "abd"))
        #expect(!Validation.constantTimeEquals("abc", "abcd"))
    }
}
