import SwitchboardCryptography
import SwitchboardTransport

/// Keeps one connection to Redis made: connects, and after a drop or a failed attempt waits the
/// backoff's delay and connects again, until closed. Loop only (reached through a `LoopBound`).
final class RedisLink {
    private enum State {
        case idle
        case connecting(RedisWire)
        case ready(RedisWire)
        case waiting(LoopTimer)
        case closed
    }

    let loop: EventLoop
    let configuration: RedisConfiguration
    private let tls: TLSContext?
    private var state = State.idle
    /// Attempts that failed since the last connection was ready.
    private var failures = 0
    private var wasEverReady = false
    /// Why there is no ready connection, for calls that arrive meanwhile.
    private(set) var downReason = "not connected yet"

    /// Prepares each new connection (a subscriber's reads its replies as pushes).
    var prepare: (RedisWire) -> Void = { _ in }
    /// A connection is logged in; `reconnected` is false for the first.
    var onReady: (RedisWire, _ reconnected: Bool) -> Void = { _, _ in }
    /// A connection dropped (`wasReady`) or an attempt failed; another attempt follows unless the
    /// handler closes the link.
    var onFailure: (RedisError, _ wasReady: Bool) -> Void = { _, _ in }
    /// Called off the loop when the loop refused an attempt's outcome (it has shut down).
    var onLoopGone: @Sendable () -> Void = {}

    init(loop: EventLoop, configuration: RedisConfiguration, tls: TLSContext?) {
        self.loop = loop
        self.configuration = configuration
        self.tls = tls
    }

    /// The logged-in connection, if there is one.
    var readyWire: RedisWire? {
        guard case .ready(let wire) = state else { return nil }
        return wire
    }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Makes the first connection.
    func start() {
        guard case .idle = state else { return }
        attempt()
    }

    /// Closes the connection and stops reconnecting; calls waiting fail with `.closed`.
    func close() {
        let previous = state
        state = .closed
        downReason = "the client is closed"
        switch previous {
        case .connecting(let wire), .ready(let wire): wire.close(.closed)
        case .waiting(let timer): loop.cancel(timer)
        case .idle, .closed: break
        }
    }

    private func attempt() {
        let wire = RedisWire(loop: loop, configuration: configuration)
        prepare(wire)
        wire.onReady = { [weak self, unowned wire] in self?.ready(wire) }
        wire.onClosed = { [weak self, unowned wire] error in self?.closed(wire, error) }
        state = .connecting(wire)
        let bound = LoopBound(wire, loop: loop)
        let handler = RedisWireHandler(bound)
        let url = configuration.url
        let timeout = configuration.connectTimeout
        let serverName = configuration.tlsServerName
        let tls = url.secure ? tls : nil
        let loop = loop
        let onLoopGone = onLoopGone
        Task {
            let result: Result<StreamConnection, StreamConnectionError>
            do throws(StreamConnectionError) {
                result = .success(
                    try await StreamConnection.connect(
                        host: url.host, port: url.port, tls: tls, serverName: serverName, timeout: timeout,
                        on: loop, handler: handler))
            } catch {
                result = .failure(error)
            }
            if !loop.executeIfRunning({ bound.value.adopt(result) }) { onLoopGone() }
        }
    }

    private func ready(_ wire: RedisWire) {
        guard case .connecting(let current) = state, current === wire else { return }
        state = .ready(wire)
        failures = 0
        let reconnected = wasEverReady
        wasEverReady = true
        onReady(wire, reconnected)
    }

    private func closed(_ wire: RedisWire, _ error: RedisError) {
        let wasReady: Bool
        switch state {
        case .connecting(let current) where current === wire: wasReady = false
        case .ready(let current) where current === wire: wasReady = true
        default: return
        }
        failures += 1
        downReason = "reconnecting to \(configuration.url) after: \(error)"
        let delay = configuration.backoff.delay(attempt: failures)
        state = .waiting(loop.scheduleTimer(after: delay) { [weak self] in
            guard let self, case .waiting = state else { return }
            attempt()
        })
        onFailure(error, wasReady)
    }
}
