import SwitchboardCryptography
import SwitchboardTransport

/// A Redis client for commands: one connection on one event loop, pipelined (any number of calls
/// in flight, their replies matched in order), reconnected with backoff after it drops.
///
/// - Every call has `commandTimeout`; a call that times out fails with `.timedOut` and the
///   connection is closed and made again, since its late reply would answer the next call.
/// - While there is no connection, calls fail at once with `.unavailable`; they never wait for
///   the link to come back.
/// - A call that was sent when the connection dropped fails with `.connectionLost`: it may or
///   may not have run.
///
/// One pipelined connection, not a pool: Redis runs commands one at a time, so more connections
/// add no throughput to pipelined calls, while one connection keeps a node's commands in the
/// order they were sent and costs one socket. Blocking commands (`BLPOP`, `WAIT`) do not belong
/// on it: they would hold every call behind them.
public final class RedisClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: RedisConfiguration
    private let loop: EventLoop
    private let link: LoopBound<RedisLink>
    private let status = LinkStatus()

    private init(configuration: RedisConfiguration, loop: EventLoop) throws(RedisError) {
        self.configuration = configuration
        self.loop = loop
        self.link = LoopBound(
            RedisLink(loop: loop, configuration: configuration, tls: try Self.tlsContext(for: configuration)),
            loop: loop)
    }

    deinit {
        let link = self.link
        _ = loop.executeIfRunning { link.value.close() }
    }

    /// Connects to the server of `configuration` on one of `group`'s loops and logs in; throws
    /// when the first connection fails (`.connectFailed`, or the server's error reply to the
    /// login, `WRONGPASS` say). Later drops are reconnected.
    public static func connect(_ configuration: RedisConfiguration, group: EventLoopGroup) async throws(RedisError)
        -> RedisClient
    {
        let client = try RedisClient(configuration: configuration, loop: group.next())
        try await client.start()
        return client
    }

    /// Connects to `url` with the default configuration.
    public static func connect(_ url: RedisURL, group: EventLoopGroup) async throws(RedisError) -> RedisClient {
        try await connect(RedisConfiguration(url: url), group: group)
    }

    /// The TLS context of a `rediss://` URL.
    static func tlsContext(for configuration: RedisConfiguration) throws(RedisError) -> TLSContext? {
        guard configuration.url.secure else { return nil }
        if let tls = configuration.tls { return tls }
        do {
            return try TLSContext.client()
        } catch {
            throw .connectFailed("TLS: \(error)")
        }
    }

    private func start() async throws(RedisError) {
        let link = self.link
        let status = self.status
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, RedisError>, Never>) in
            let first = OneShot(continuation)
            let submitted = loop.executeIfRunning {
                let link = link.value
                link.onLoopGone = { first.resume(.failure(.closed)) }
                link.onReady = { _, _ in
                    status.set(connected: true)
                    first.resume(.success(()))
                }
                var everReady = false
                link.onFailure = { [unowned link] error, wasReady in
                    status.set(connected: false)
                    everReady = everReady || wasReady
                    guard !everReady else { return }
                    link.close()
                    first.resume(.failure(error.asConnectFailure))
                }
                link.start()
            }
            if !submitted { first.resume(.failure(.closed)) }
        }
        try result.get()
    }

    /// True while a logged-in connection is up (for a readiness check).
    public var isConnected: Bool { status.isConnected }

    /// Sends the command made of `arguments` (its name first) and returns the reply; an error
    /// reply throws `.reply` with its kind.
    public func send(_ arguments: [String]) async throws(RedisError) -> RESPValue {
        try await call(RESPCommand.encode(arguments))
    }

    /// Like `send(_:)`, with binary-safe arguments.
    public func send(bytes arguments: [[UInt8]]) async throws(RedisError) -> RESPValue {
        var encoded: [UInt8] = []
        RESPCommand.encode(arguments, into: &encoded)
        return try await call(encoded)
    }

    /// Closes the connection and stops reconnecting; calls still waiting fail with `.closed`.
    public func close() async {
        let link = self.link
        let status = self.status
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let submitted = loop.executeIfRunning {
                link.value.close()
                status.set(connected: false)
                continuation.resume()
            }
            if !submitted { continuation.resume() }
        }
    }

    /// Queues the command made of `arguments` at once, behind every command queued before it,
    /// and calls `answered` on the client's loop with its reply (an error reply as `.reply`):
    /// commands sent one after another this way are pipelined and keep their order, with no
    /// wait between them.
    public func send(
        bytes arguments: [[UInt8]], answered: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        var encoded: [UInt8] = []
        RESPCommand.encode(arguments, into: &encoded)
        enqueue(encoded, answered: answered)
    }

    /// Queues the encoded command on the loop and waits for its reply.
    private func call(_ bytes: [UInt8]) async throws(RedisError) -> RESPValue {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RESPValue, RedisError>, Never>) in
            enqueue(bytes) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Queues the encoded command on the loop; `answered` gets its reply, or why there is none.
    private func enqueue(_ bytes: [UInt8], answered: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        let link = self.link
        let timeout = configuration.commandTimeout
        let submitted = loop.executeIfRunning {
            let link = link.value
            guard let wire = link.readyWire else {
                answered(.failure(link.isClosed ? .closed : .unavailable(link.downReason)))
                return
            }
            wire.call(bytes, timeout: timeout, complete: answered)
        }
        if !submitted { answered(.failure(.closed)) }
    }
}

extension RedisError {
    /// The error of a first connection that failed: the server's error reply as it is, the rest
    /// as `.connectFailed`.
    var asConnectFailure: RedisError {
        switch self {
        case .reply, .connectFailed, .closed: self
        default: .connectFailed(description)
        }
    }
}
