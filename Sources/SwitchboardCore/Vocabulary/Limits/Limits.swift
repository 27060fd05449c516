/// Every limit of the reference, with the reference's default, grouped by the feature it bounds.
/// The server enforces each one.
///
/// `limits.messages.payloadMaxBytes`, `limits.presence.statesPerUser`, `limits.locks.ttlRange` …:
/// each group holds its feature's sizes, counts and rates (`LIMITS.md` lists the reference's
/// figures by the same areas).
public struct Limits: Sendable, Hashable {
    /// Channel names and user ids, which every feature checks.
    public var names = Names()
    /// Logins, heartbeats, presence timeouts, resume buffers and the per-client budget of calls
    /// no feature budgets on its own.
    public var sessions = Sessions()
    /// Message channels and user channels: payloads, subscriptions, publish rates.
    public var messages = Messages()
    /// Stream channels and their topics.
    public var streams = Streams()
    /// Presence: temporary states, snapshots, `whoNow` pages, interval mode.
    public var presence = Presence()
    /// Channel and user metadata.
    public var storage = Storage()
    /// Locks.
    public var locks = Locks()

    /// The reference's limits.
    public init() {}

    /// The reference's limits with the per-client rate limits lifted (for load tests).
    public static var withoutRateLimits: Limits { Limits().liftingRateLimits() }

    /// These limits with the per-client and per-channel rate limits lifted.
    public func liftingRateLimits() -> Limits {
        var limits = self
        limits.sessions.otherCallsPerSecondPerClient = nil
        limits.messages.publishesPerSecondPerClient = nil
        limits.messages.perChannelPerSecond = nil
        limits.streams.topicMessagesPerSecond = nil
        limits.storage.callsPerSecondPerClient = nil
        limits.locks.acquiresPerSecondPerClient = nil
        return limits
    }
}

extension Comparable {
    /// The value moved into `range`: its nearer bound when outside.
    func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
