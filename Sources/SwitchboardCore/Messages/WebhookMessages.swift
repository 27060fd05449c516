/// What the webhooks module counts, for `/metrics`: asked when a scrape reads it.
public typealias WebhookStatistics = Statistics<WebhookCounts>

/// Webhook deliveries, counted since the server started (the queue's length: now).
public struct WebhookCounts: Sendable, Hashable {
    /// Deliveries waiting in the queue now (one per event and target), the one in flight included.
    public var queued: Int
    /// Deliveries added to the queue.
    public var enqueued: UInt64
    /// Deliveries a receiver accepted (a 2xx answer).
    public var sent: UInt64
    /// Attempts that failed (no answer in time, a refused connection, a status other than 2xx).
    public var failed: UInt64
    /// Deliveries given up: retried for the whole retry window, or refused because the queue was full.
    public var dropped: UInt64
    /// From an event to its receiver's 2xx answer, retries included.
    public var latency: DurationHistogram.Snapshot
    /// Creates counts.
    public init(
        queued: Int = 0, enqueued: UInt64 = 0, sent: UInt64 = 0, failed: UInt64 = 0, dropped: UInt64 = 0,
        latency: DurationHistogram.Snapshot = DurationHistogram.Snapshot()
    ) {
        self.queued = queued
        self.enqueued = enqueued
        self.sent = sent
        self.failed = failed
        self.dropped = dropped
        self.latency = latency
    }
}

/// Puts new receivers and a new signing key in force while the server runs (`switchboard serve`
/// on SIGHUP). Answered by the webhooks module when the server runs one; a server composed
/// without webhooks has no handler, and a replacement module may leave it unanswered (then the
/// receivers it started with stay).
public struct ReplaceWebhookReceivers: BusRequest {
    public typealias Response = WebhookReceiversReplaced
    public static var operation: String { "webhooks.replaceReceivers" }
    /// URLs that get every app's events.
    public var everyApp: [String]
    /// URLs that get one app's events, by app id, besides `everyApp`.
    public var perApp: [AppID: [String]]
    /// The key that signs each delivery (a receiver configured with its own keeps its own).
    public var secret: [UInt8]
    /// The receivers `everyApp` and `perApp`, signed with `secret`.
    public init(everyApp: [String], perApp: [AppID: [String]], secret: [UInt8]) {
        self.everyApp = everyApp
        self.perApp = perApp
        self.secret = secret
    }
}

/// What replacing the receivers did.
public struct WebhookReceiversReplaced: Sendable, Hashable {
    /// Deliveries that waited for a receiver no longer configured: given up, counted as dropped.
    public var givenUp: Int
    /// The count.
    public init(givenUp: Int) { self.givenUp = givenUp }
}
