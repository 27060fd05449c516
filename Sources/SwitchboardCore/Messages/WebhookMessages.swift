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
