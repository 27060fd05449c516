import Synchronization
import SwitchboardCryptography

/// A small HTTP/1.1 client for one request per connection (`Connection: close`), over plain TCP
/// or TLS: what the webhooks need to `POST` a body and learn the status. The answer is the
/// response's head; its body is not read. Every exchange ends within its timeout, whatever the
/// peer does (never answers, answers garbage, closes early, sends an endless head).
public final class HTTPClient: Sendable {
    private let group: EventLoopGroup
    private let tls: TLSContext?

    /// A client on `group`'s loops; `https://` URLs use `tls` (a client context), or are refused
    /// when it is nil.
    public init(group: EventLoopGroup, tls: TLSContext? = nil) {
        self.group = group
        self.tls = tls
    }

    /// Sends `method` `url` with `headers` and `body`, and returns the response's head, all
    /// within `timeout`.
    public func send(
        _ method: String = "POST", to url: HTTPURL, headers: [HTTPHeaderField] = [], body: [UInt8] = [], timeout: Duration
    ) async -> Result<HTTPResponseHead, HTTPClientError> {
        if url.secure && tls == nil { return .failure(.tlsUnavailable) }
        let loop = group.next()
        let exchange = HTTPExchange(loop: loop)
        let start = ContinuousClock.now
        let connection: StreamConnection
        do {
            connection = try await StreamConnection.connect(
                host: url.host, port: url.port, tls: url.secure ? tls : nil, timeout: timeout, on: loop, handler: exchange)
        } catch {
            return .failure(.connectFailed(error))
        }
        var head = "\(method) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\n"
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let remaining = timeout - (ContinuousClock.now - start)
        return await exchange.answer(on: connection, request: Array(head.utf8) + body, within: remaining)
    }
}

/// Why an exchange got no response head.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection could not be made.
    case connectFailed(StreamConnectionError)
    /// The peer closed (or reset) the connection before its response head was complete.
    case closedEarly
    /// No complete response head within the timeout.
    case timedOut
    /// What the peer sent is not an HTTP/1.x response head.
    case invalidResponse(String)
    /// An `https://` URL without a TLS context.
    case tlsUnavailable

    public var description: String {
        switch self {
        case .connectFailed(let error): "cannot connect: \(error)"
        case .closedEarly: "the connection closed before the response"
        case .timedOut: "no response in time"
        case .invalidResponse(let reason): "invalid response: \(reason)"
        case .tlsUnavailable: "https is not available"
        }
    }
}

/// One request and its answer, on one connection: reads the response head as it arrives and ends
/// the exchange once, at the head, an invalid answer, the close or the timeout.
final class HTTPExchange: StreamConnectionHandler {
    private struct State {
        var parser = HTTPResponseHeadParser()
        var waiting: CheckedContinuation<Result<HTTPResponseHead, HTTPClientError>, Never>?
        /// How it ended, when it ended before anyone waited.
        var outcome: Result<HTTPResponseHead, HTTPClientError>?
        var timer: LoopTimer?
    }

    private let loop: EventLoop
    private let state = Mutex(State())

    init(loop: EventLoop) { self.loop = loop }

    /// Writes `request` and waits for the answer, at most `timeout`.
    func answer(
        on connection: StreamConnection, request: [UInt8], within timeout: Duration
    ) async -> Result<HTTPResponseHead, HTTPClientError> {
        let result = await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Result<HTTPResponseHead, HTTPClientError>? in
                if let outcome = state.outcome { return outcome }
                state.waiting = continuation
                return nil
            }
            if let ended { return continuation.resume(returning: ended) }
            let scheduled = loop.executeIfRunning { [self] in
                let timer = loop.scheduleTimer(after: max(timeout, .zero)) { [self] in
                    end(.failure(.timedOut))
                    connection.close()
                }
                let keep = state.withLock { state -> Bool in
                    guard state.outcome == nil else { return false }
                    state.timer = timer
                    return true
                }
                if !keep { loop.cancel(timer) }
            }
            if !scheduled { end(.failure(.timedOut)) }
            if !connection.write(request) { end(.failure(.closedEarly)) }
        }
        connection.close()
        return result
    }

    func connection(_ connection: StreamConnection, received bytes: UnsafeRawBufferPointer) {
        let progress = state.withLock { state in state.outcome == nil ? state.parser.feed(bytes) : .needMore }
        switch progress {
        case .needMore: return
        case .head(let head): end(.success(head))
        case .invalid(let reason): end(.failure(.invalidResponse(reason)))
        }
        connection.close()
    }

    func connectionClosed(_ connection: StreamConnection, error: StreamConnectionError?) {
        switch error {
        // Closed or reset by the peer once connected: either way it ended before answering.
        case nil, .ioFailed: end(.failure(.closedEarly))
        case let error?: end(.failure(.connectFailed(error)))
        }
    }

    /// Ends the exchange with `outcome`, unless it ended already.
    private func end(_ outcome: Result<HTTPResponseHead, HTTPClientError>) {
        let (waiting, timer) = state.withLock { state -> (CheckedContinuation<Result<HTTPResponseHead, HTTPClientError>, Never>?, LoopTimer?) in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = outcome
            defer {
                state.waiting = nil
                state.timer = nil
            }
            return (state.waiting, state.timer)
        }
        // Timers are the loop's alone; `end` may run on the caller's thread.
        if let timer { _ = loop.executeIfRunning { [loop] in loop.cancel(timer) } }
        waiting?.resume(returning: outcome)
    }
}
