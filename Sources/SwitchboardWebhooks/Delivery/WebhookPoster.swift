/// What sends a delivery over HTTP: the server gives the module one built on the transport's
/// HTTP client (`HTTPWebhookPoster`); tests give it a fake. It never throws: a failure is an
/// outcome, retried by the module.
public protocol WebhookPoster: Sendable {
    /// Posts `request` and reports how it ended, within `request.timeout`.
    func post(_ request: WebhookRequest) async -> WebhookPostOutcome
    /// Lets go of what posting holds (threads, connections); the module calls it as it stops.
    func shutdown() async
}

extension WebhookPoster {
    public func shutdown() async {}
}

/// One attempt: a `POST` of a JSON body to a receiver.
public struct WebhookRequest: Sendable, Hashable {
    /// The receiver's URL (`http://` or `https://`).
    public var url: String
    /// Header fields besides the ones every request has (`Host`, `Content-Length`).
    public var headers: [WebhookHeader]
    /// The JSON body.
    public var body: [UInt8]
    /// How long the attempt may take, connecting included.
    public var timeout: Duration

    /// Creates a request.
    public init(url: String, headers: [WebhookHeader], body: [UInt8], timeout: Duration) {
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One header field.
public struct WebhookHeader: Sendable, Hashable {
    /// The field's name.
    public var name: String
    /// Its value.
    public var value: String
    /// Creates a field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// How an attempt ended.
public enum WebhookPostOutcome: Sendable, Hashable {
    /// The receiver answered with this HTTP status (2xx: it took the delivery).
    case answered(status: Int)
    /// No answer: the connection failed, closed early, timed out, or the answer was not HTTP.
    case failed(String)

    /// Whether the receiver took the delivery.
    public var isAccepted: Bool {
        if case .answered(let status) = self { return (200..<300).contains(status) }
        return false
    }
}
