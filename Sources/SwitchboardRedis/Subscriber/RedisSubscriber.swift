import SwitchboardTransport

/// A Redis pub/sub subscriber: a connection of its own, subscribed to the channels it is asked
/// for, which hands every message to a handler on its event loop.
///
/// The channels asked for are the subscriber's truth: after the link drops and comes back, it
/// subscribes all of them again and reports `linkRestored(gap:)` with every one, since Redis
/// delivered their messages to nobody meanwhile. It checks the link with `PING` every
/// `healthCheckInterval` and closes it when no answer comes within `commandTimeout`, so a link
/// that went silent (a failover, a cut network) is found and made again.
public final class RedisSubscriber: Sendable {
    /// The configuration the subscriber was made with.
    public let configuration: RedisConfiguration
    private let loop: EventLoop
    private let state: LoopBound<SubscriberState>
    private let status = LinkStatus()

    private init(
        configuration: RedisConfiguration, loop: EventLoop, handler: @escaping @Sendable (RedisSubscriberEvent) -> Void
    ) throws(RedisError) {
        self.configuration = configuration
        self.loop = loop
        let link = RedisLink(loop: loop, configuration: configuration, tls: try RedisClient.tlsContext(for: configuration))
        self.state = LoopBound(SubscriberState(link: link, handler: handler), loop: loop)
    }

    deinit {
        let state = self.state
        _ = loop.executeIfRunning { state.value.close() }
    }

    /// Connects to the server of `configuration` on one of `group`'s loops; throws when the first
    /// connection fails. `handler` is called on the subscriber's loop, in order, and must return
    /// quickly (hand the work to a task or an actor).
    public static func connect(
        _ configuration: RedisConfiguration, group: EventLoopGroup,
        handler: @escaping @Sendable (RedisSubscriberEvent) -> Void
    ) async throws(RedisError) -> RedisSubscriber {
        let subscriber = try RedisSubscriber(configuration: configuration, loop: group.next(), handler: handler)
        let state = subscriber.state
        let status = subscriber.status
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, RedisError>, Never>) in
            let first = OneShot(continuation)
            let submitted = subscriber.loop.executeIfRunning {
                state.value.start(
                    connected: { status.set(connected: $0) },
                    first: { first.resume($0) })
            }
            if !submitted { first.resume(.failure(.closed)) }
        }
        try result.get()
        return subscriber
    }

    /// True while the link is up (for a readiness check).
    public var isConnected: Bool { status.isConnected }

    /// Subscribes to `channels`, returning once Redis has confirmed each. While the link is down
    /// it throws `.unavailable`, and the channels stay asked for: they are subscribed when the link
    /// is back (and listed in its `linkRestored` gap). Unconfirmed within `commandTimeout`, it
    /// throws `.timedOut` and the link is made again.
    public func subscribe(_ channels: [RedisChannel]) async throws(RedisError) {
        let state = self.state
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, RedisError>, Never>) in
            let submitted = loop.executeIfRunning {
                state.value.subscribe(channels) { continuation.resume(returning: $0) }
            }
            if !submitted { continuation.resume(returning: .failure(.closed)) }
        }
        try result.get()
    }

    /// Stops the subscriptions to `channels`: their messages are no longer handed over from the
    /// moment this returns.
    public func unsubscribe(_ channels: [RedisChannel]) async {
        let state = self.state
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let submitted = loop.executeIfRunning {
                state.value.unsubscribe(channels)
                continuation.resume()
            }
            if !submitted { continuation.resume() }
        }
    }

    /// Closes the link and stops reconnecting; no event follows.
    public func close() async {
        let state = self.state
        let status = self.status
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let submitted = loop.executeIfRunning {
                state.value.close()
                status.set(connected: false)
                continuation.resume()
            }
            if !submitted { continuation.resume() }
        }
    }
}
