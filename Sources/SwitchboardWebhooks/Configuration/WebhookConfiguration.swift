import SwitchboardCore

/// Where a server's webhooks go and how hard it tries: the receivers of every app and of single
/// apps, the secret that signs each delivery, the retry window and the queue's bound.
public struct WebhookConfiguration: Sendable {
    /// Receivers of every app's events.
    public var targets: [WebhookTarget]
    /// Receivers of one app's events, by app id, besides `targets`.
    public var appTargets: [AppID: [WebhookTarget]]
    /// The key of the `X-Switchboard-Signature` HMAC, unless a target has its own.
    public var secret: [UInt8]
    /// What a `message.offline` event carries of the message.
    public var messageContent: OfflineMessageContent
    /// How long a delivery is retried, counted from its event; then it is dropped and counted.
    public var retryWindow: Duration
    /// The waits between attempts.
    public var backoff: WebhookBackoff
    /// How long one attempt may take, connecting included, before it counts as failed.
    public var attemptTimeout: Duration
    /// Most deliveries waiting at once (every target together); events beyond are dropped and
    /// counted, so a receiver that is down for long cannot fill the disk.
    public var maxQueued: Int
    /// How often waiting retries are looked at, on the module's clock.
    public var tickInterval: Duration
    /// A number in [0, 1) for each retry's jitter; by default the system's random numbers.
    public var random: @Sendable () -> Double

    /// Receivers `targets` for every app, signed with `secret`; the defaults retry for an hour,
    /// from 1 s to 5 min apart, each attempt within 10 s, with up to 100,000 deliveries waiting.
    public init(targets: [WebhookTarget] = [], appTargets: [AppID: [WebhookTarget]] = [:], secret: [UInt8]) {
        self.targets = targets
        self.appTargets = appTargets
        self.secret = secret
        messageContent = .payload
        retryWindow = .seconds(3600)
        backoff = WebhookBackoff()
        attemptTimeout = .seconds(10)
        maxQueued = 100_000
        tickInterval = .milliseconds(100)
        random = { Double.random(in: 0..<1) }
    }

    /// Whether any receiver is configured (the server runs the module only then).
    public var hasTargets: Bool { !targets.isEmpty || appTargets.values.contains { !$0.isEmpty } }

    /// The URL of every receiver, of every app's and of single apps'.
    var receiverURLs: Set<String> { Set((targets + appTargets.values.flatMap { $0 }).map(\.url)) }

    /// The receivers of an event of `app`: every app's, then the app's own, each URL once.
    func targets(of app: AppID) -> [WebhookTarget] {
        var seen = Set<String>()
        return (targets + (appTargets[app] ?? [])).filter { seen.insert($0.url).inserted }
    }

    /// The secret that signs deliveries to `url`.
    func secret(for url: String) -> [UInt8] {
        (targets + appTargets.values.flatMap { $0 }).first { $0.url == url }?.secret ?? secret
    }
}

/// One receiver: an `http://` or `https://` URL that takes a `POST` per event.
public struct WebhookTarget: Sendable, Hashable {
    /// Where deliveries are posted.
    public var url: String
    /// Its own signing key, instead of the configuration's.
    public var secret: [UInt8]?
    /// The event types it gets; nil for every type.
    public var events: Set<WebhookEventType>?
    /// A receiver at `url`.
    public init(url: String, secret: [UInt8]? = nil, events: Set<WebhookEventType>? = nil) {
        self.url = url
        self.secret = secret
        self.events = events
    }
}

/// What a `message.offline` event carries of the message it reports.
public enum OfflineMessageContent: String, Sendable, Hashable, CaseIterable {
    /// The payload itself (text as a string, binary as base64) and its size.
    case payload
    /// Only the payload's size in bytes.
    case size
}

/// Exponential backoff with jitter: the n-th retry waits `first · 2^(n-1)`, at most `max`, of
/// which the upper half is random ("equal jitter"): retries of many deliveries spread out, and
/// none comes sooner than half its step.
public struct WebhookBackoff: Sendable, Hashable {
    /// The wait before the first retry, before jitter.
    public var first: Duration
    /// The longest wait.
    public var max: Duration
    /// Waits from `first` doubling up to `max`.
    public init(first: Duration = .seconds(1), max: Duration = .seconds(300)) {
        self.first = first
        self.max = max
    }

    /// The wait after `failures` failed attempts (1 or more); `jitter` is a number in [0, 1).
    public func delay(afterFailures failures: Int, jitter: Double) -> Duration {
        let doublings = Swift.min(Swift.max(failures - 1, 0), 40)
        let step = Swift.min(max, first * (1 << Swift.min(doublings, 30)))
        let half = step / 2
        return half + half * Swift.min(Swift.max(jitter, 0), 1)
    }
}
