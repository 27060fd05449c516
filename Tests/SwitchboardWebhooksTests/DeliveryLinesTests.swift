import Testing
import SwitchboardCore
@testable import SwitchboardWebhooks

/// The queue's rules as a pure value: one attempt in flight per receiver, queue order, backoff
/// with jitter, the retry window.
@Suite(.timeLimit(.minutes(1))) struct DeliveryLinesTests {
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    func delivery(_ sequence: Int64, to target: String = "http://a/", at time: WallClockTime? = nil) -> QueuedDelivery {
        QueuedDelivery(sequence: sequence, eventId: "e\(sequence)", target: target, body: [], created: time ?? start)
    }

    func lines(window: Duration = .seconds(60)) -> DeliveryLines {
        DeliveryLines(retryWindow: window, backoff: WebhookBackoff(first: .seconds(1), max: .seconds(8)))
    }

    @Test func eachReceiverHasOneAttemptInFlightItsOldestDelivery() {
        var lines = lines()
        for sequence in Int64(1)...3 { lines.add(delivery(sequence)) }
        lines.add(delivery(4, to: "http://b/"))
        #expect(lines.due(now: start).map(\.sequence) == [1, 4])
        #expect(lines.due(now: start).isEmpty, "nothing more while both are in flight")
        #expect(lines.succeeded("http://a/")?.sequence == 1)
        #expect(lines.due(now: start).map(\.sequence) == [2])
        #expect(lines.count == 3)
    }

    @Test func aRemovedLineGivesUpItsDeliveriesAndIgnoresTheOutcomeInFlight() {
        var lines = lines()
        for sequence in Int64(1)...3 { lines.add(delivery(sequence)) }
        lines.add(delivery(4, to: "http://b/"))
        #expect(lines.due(now: start).map(\.sequence) == [1, 4])
        #expect(lines.removeLine("http://a/").map(\.sequence) == [1, 2, 3], "the one in flight included")
        #expect(lines.count == 1 && lines.targets == ["http://b/"])
        #expect(lines.succeeded("http://a/") == nil && lines.failed("http://a/", now: start, jitter: 0) == nil)
        #expect(lines.removeLine("http://a/").isEmpty)
        lines.add(delivery(5))
        #expect(lines.due(now: start).map(\.sequence) == [5], "a receiver configured again starts a new line")
    }

    @Test func aFailureWaitsItsBackoffAndKeepsTheLinesOrder() {
        var lines = lines()
        lines.add(delivery(1))
        lines.add(delivery(2))
        _ = lines.due(now: start)
        #expect(lines.failed("http://a/", now: start, jitter: 0) == .retry(at: start + .milliseconds(500)))
        #expect(lines.due(now: start + .milliseconds(499)).isEmpty, "delivery 2 may not overtake 1")
        #expect(lines.due(now: start + .milliseconds(500)).map(\.sequence) == [1])
        #expect(lines.failed("http://a/", now: start + .seconds(1), jitter: 0.5) == .retry(at: start + .seconds(1) + .milliseconds(1500)))
        _ = lines.due(now: start + .seconds(3))
        #expect(lines.succeeded("http://a/")?.sequence == 1)
        #expect(lines.due(now: start + .seconds(3)).map(\.sequence) == [2], "a success clears the backoff")
    }

    @Test func theBackoffDoublesUpToItsMaximumWithJitterInItsUpperHalf() {
        let backoff = WebhookBackoff(first: .seconds(1), max: .seconds(8))
        #expect((1...6).map { backoff.delay(afterFailures: $0, jitter: 0) } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
        #expect(backoff.delay(afterFailures: 3, jitter: 0.5) == .seconds(3))
        #expect(backoff.delay(afterFailures: 10_000, jitter: 1) == .seconds(8))
    }

    @Test func aDeliveryOlderThanTheWindowIsDroppedAndTheLineGoesOn() {
        var lines = lines(window: .seconds(10))
        lines.add(delivery(1))
        lines.add(delivery(2, at: start + .seconds(9)))
        _ = lines.due(now: start)
        #expect(lines.failed("http://a/", now: start + .seconds(9), jitter: 0) == .retry(at: start + .seconds(9) + .milliseconds(500)))
        _ = lines.due(now: start + .seconds(10))
        #expect(lines.failed("http://a/", now: start + .seconds(10), jitter: 0) == .dropped(delivery(1)))
        #expect(lines.count == 1)
        #expect(lines.due(now: start + .seconds(10)).map(\.sequence) == [2], "the next goes at once, its own window")
    }

    @Test func reportsForAReceiverWithNothingInFlightChangeNothing() {
        var lines = lines()
        lines.add(delivery(1))
        #expect(lines.succeeded("http://a/") == nil)
        #expect(lines.failed("http://a/", now: start, jitter: 0) == nil)
        #expect(lines.failed("http://nobody/", now: start, jitter: 0) == nil)
        #expect(lines.count == 1)
    }

    @Test func aLongLineKeepsItsOrderThroughCompaction() {
        var lines = lines()
        for sequence in 1...500 { lines.add(delivery(Int64(sequence))) }
        var order: [Int64] = []
        while let next = lines.due(now: start).first {
            order.append(next.sequence)
            lines.succeeded(next.target)
        }
        #expect(order == Array(1...500))
        #expect(lines.count == 0)
    }
}
