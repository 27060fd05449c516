import SwitchboardCore

/// The queue's order and retry rules as a pure value: one line per receiver, deliveries in
/// sequence order, and at most one attempt in flight per receiver, always its oldest delivery.
/// So a receiver gets a user's (or a channel's) events in the order they happened, whatever
/// fails and is retried in between; a receiver that is down holds up only its own line.
///
/// A failed attempt waits `backoff` (with jitter) before the next; a delivery whose event is
/// older than `retryWindow` when an attempt fails is given up, and the line goes on with the
/// next one.
public struct DeliveryLines: Sendable {
    /// What to do after a failed attempt.
    public enum Verdict: Sendable, Hashable {
        /// Try again at this time.
        case retry(at: WallClockTime)
        /// The retry window is over: the delivery is given up (and out of its line).
        case dropped(QueuedDelivery)
    }

    private struct Line: Sendable {
        var waiting: [QueuedDelivery] = []
        /// Index of the oldest delivery still waiting (the array is compacted now and then).
        var head = 0
        var inFlight = false
        var failures = 0
        var notBefore: WallClockTime?

        var first: QueuedDelivery? { head < waiting.count ? waiting[head] : nil }
        var count: Int { waiting.count - head }

        mutating func removeFirst() -> QueuedDelivery {
            let first = waiting[head]
            head += 1
            if head > 64 && head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return first
        }
    }

    /// How long a delivery is retried, counted from its event.
    public let retryWindow: Duration
    /// The waits between attempts.
    public let backoff: WebhookBackoff
    private var lines: [String: Line] = [:]
    /// Deliveries waiting in every line, those in flight included.
    public private(set) var count = 0

    /// No deliveries yet.
    public init(retryWindow: Duration, backoff: WebhookBackoff) {
        self.retryWindow = retryWindow
        self.backoff = backoff
    }

    /// Puts `delivery` at the end of its receiver's line (deliveries are added in sequence order).
    public mutating func add(_ delivery: QueuedDelivery) {
        lines[delivery.target, default: Line()].waiting.append(delivery)
        count += 1
    }

    /// The deliveries to attempt now: the oldest of each line with none in flight whose wait is
    /// over. Each is in flight from now until `succeeded` or `failed` is called for its receiver.
    public mutating func due(now: WallClockTime) -> [QueuedDelivery] {
        var due: [QueuedDelivery] = []
        for (target, line) in lines where !line.inFlight {
            guard let first = line.first else { continue }
            if let notBefore = line.notBefore, notBefore > now { continue }
            lines[target]?.inFlight = true
            due.append(first)
        }
        return due.sorted { $0.sequence < $1.sequence }
    }

    /// The receiver of `target` took its oldest delivery, which leaves the line.
    @discardableResult
    public mutating func succeeded(_ target: String) -> QueuedDelivery? {
        guard var line = lines[target], line.inFlight, line.first != nil else { return nil }
        let delivered = line.removeFirst()
        line.inFlight = false
        line.failures = 0
        line.notBefore = nil
        store(line, for: target)
        count -= 1
        return delivered
    }

    /// The attempt in flight to `target` failed at `now`; `jitter` is a number in [0, 1).
    public mutating func failed(_ target: String, now: WallClockTime, jitter: Double) -> Verdict? {
        guard var line = lines[target], line.inFlight, let first = line.first else { return nil }
        line.inFlight = false
        guard now - first.created < retryWindow else {
            _ = line.removeFirst()
            line.failures = 0
            line.notBefore = nil
            store(line, for: target)
            count -= 1
            return .dropped(first)
        }
        line.failures += 1
        let next = now + backoff.delay(afterFailures: line.failures, jitter: jitter)
        line.notBefore = next
        lines[target] = line
        return .retry(at: next)
    }

    /// Takes `target`'s line away: its deliveries, the one in flight included (whose outcome
    /// `succeeded` and `failed` then ignore), leave and are returned.
    public mutating func removeLine(_ target: String) -> [QueuedDelivery] {
        guard let line = lines.removeValue(forKey: target) else { return [] }
        count -= line.count
        return Array(line.waiting[line.head...])
    }

    /// The receivers with a line.
    public var targets: [String] { Array(lines.keys) }

    /// How many deliveries wait for `target`.
    public func count(for target: String) -> Int { lines[target]?.count ?? 0 }

    /// The sequence of the delivery in flight to `target`, if one is.
    public func sequenceInFlight(to target: String) -> Int64? {
        guard let line = lines[target], line.inFlight else { return nil }
        return line.first?.sequence
    }

    /// Whether an attempt to `target` is in flight.
    public func isInFlight(_ target: String) -> Bool { lines[target]?.inFlight ?? false }

    private mutating func store(_ line: Line, for target: String) {
        lines[target] = line.count == 0 && !line.inFlight ? nil : line
    }
}
