import SwitchboardTransport

/// One connection to Redis, on the client's loop: the login (`HELLO 3`, falling back to RESP2
/// with `AUTH`; then `SELECT`), the calls awaiting replies in the order they were written, and
/// their deadline. Loop only (reached through a `LoopBound`).
///
/// Replies come back in the order commands were sent, so each reply completes the oldest call
/// waiting. Every call on a connection gets the same timeout, so the oldest waiting call always
/// has the earliest deadline: one timer, set for the oldest call, serves them all. When a call
/// times out the connection is closed: its reply may still come, and would be taken for the
/// next call's. The calls behind it fail with `.connectionLost` and the link reconnects.
final class RedisWire {
    private struct Waiting {
        let deadline: ContinuousClock.Instant
        let complete: (Result<RESPValue, RedisError>) -> Void
    }

    let loop: EventLoop
    let configuration: RedisConfiguration
    /// A reply when no call waits is a push (a subscriber's messages in RESP2) rather than an
    /// error.
    var unmatchedRepliesArePushes = false
    /// Pushes, and replies no call waits for when `unmatchedRepliesArePushes`.
    var onPush: (RESPValue) -> Void = { _ in }
    /// The login finished; calls may be sent.
    var onReady: () -> Void = {}
    /// The connection closed, or could not be made or logged in; called once.
    var onClosed: (RedisError) -> Void = { _ in }

    private var connection: StreamConnection?
    private var reader: RESPReader
    private var waiting: [Waiting] = []
    private var head = 0
    private var timer: LoopTimer?
    /// When `timer` fires.
    private var timerDeadline: ContinuousClock.Instant?
    private(set) var isClosed = false
    private(set) var isReady = false
    /// True once `HELLO 3` was accepted.
    private(set) var speaksRESP3 = false

    init(loop: EventLoop, configuration: RedisConfiguration) {
        self.loop = loop
        self.configuration = configuration
        self.reader = RESPReader(bounds: configuration.readerBounds)
    }

    /// Calls not yet answered.
    var waitingCount: Int { waiting.count - head }

    // MARK: Connection

    /// Takes the outcome of connecting and starts the login, or closes.
    func adopt(_ result: Result<StreamConnection, StreamConnectionError>) {
        switch result {
        case .failure(let error):
            close(.connectFailed("\(configuration.url): \(error)"))
        case .success(let connection):
            guard !isClosed else {
                connection.close()
                return
            }
            self.connection = connection
            logIn()
        }
    }

    /// Bytes from the server: each whole reply completes the oldest waiting call.
    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !isClosed else { return }
        reader.append(bytes)
        while !isClosed {
            let value: RESPValue
            do {
                guard let next = try reader.next() else { return }
                value = next
            } catch {
                close(.protocolViolation(error.reason))
                return
            }
            dispatch(value)
        }
    }

    private func dispatch(_ value: RESPValue) {
        if case .push = value {
            onPush(value)
            return
        }
        guard head < waiting.count else {
            if unmatchedRepliesArePushes {
                onPush(value)
            } else {
                close(.protocolViolation("a reply no call was waiting for"))
            }
            return
        }
        let call = waiting[head]
        head += 1
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        if case .error(let text) = value {
            call.complete(.failure(.reply(text)))
        } else {
            call.complete(.success(value))
        }
    }

    /// Closes the connection and fails every waiting call with `error`; the first close wins.
    func close(_ error: RedisError) {
        guard !isClosed else { return }
        isClosed = true
        isReady = false
        if let timer { loop.cancel(timer) }
        timer = nil
        connection?.close()
        connection = nil
        let calls = waiting[head...]
        waiting = []
        head = 0
        for call in calls { call.complete(.failure(error)) }
        onClosed(error)
    }

    // MARK: Calls

    /// Writes the encoded command `bytes` and calls `complete` with its reply; `complete` runs on
    /// the loop, at once with an error when the connection is closed.
    func call(_ bytes: [UInt8], timeout: Duration, complete: @escaping (Result<RESPValue, RedisError>) -> Void) {
        guard !isClosed, let connection, connection.write(bytes) else {
            complete(.failure(.connectionLost("the connection is closed")))
            return
        }
        let deadline = ContinuousClock.now + timeout
        waiting.append(Waiting(deadline: deadline, complete: complete))
        // The timer may still be set for an earlier call's later deadline (a login step's).
        if let timer, let timerDeadline, timerDeadline > deadline {
            loop.cancel(timer)
            self.timer = nil
        }
        if timer == nil { armTimer() }
    }

    /// Writes the encoded command `bytes` whose answer arrives as a push (a subscriber's
    /// `SUBSCRIBE`, or `PING` on a subscribed RESP2 connection); false when closed.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard !isClosed, let connection else { return false }
        return connection.write(bytes)
    }

    /// Sets the timer for the oldest waiting call's deadline.
    private func armTimer() {
        guard head < waiting.count else { return }
        let deadline = waiting[head].deadline
        timerDeadline = deadline
        timer = loop.scheduleTimer(after: max(deadline - .now, .zero)) { [self] in
            timer = nil
            guard !isClosed, head < waiting.count else { return }
            guard waiting[head].deadline <= .now else { return armTimer() }
            let late = waiting[head]
            head += 1
            late.complete(.failure(.timedOut))
            close(.connectionLost("closed after a call timed out"))
        }
    }

    // MARK: Login

    private func logIn() {
        let url = configuration.url
        guard configuration.preferRESP3 else { return authenticate() }
        var hello = ["HELLO", "3"]
        if let password = url.password { hello += ["AUTH", url.username ?? "default", password] }
        loginStep(hello) { [self] result in
            switch result {
            case .success:
                speaksRESP3 = true
                selectDatabase()
            case .failure(.reply(let kind, let message))
            where kind == "NOPROTO" || (kind == "ERR" && message.lowercased().contains("unknown command")):
                authenticate()
            case .failure(let error):
                close(error)
            }
        }
    }

    /// RESP2's login: `AUTH` when there is a password, else a `PING`, so that a server asking for
    /// a password refuses the login (`NOAUTH`) rather than every later call.
    private func authenticate() {
        let url = configuration.url
        let auth = url.password.map { password in url.username.map { ["AUTH", $0, password] } ?? ["AUTH", password] }
        loginStep(auth ?? ["PING"]) { [self] result in
            if case .failure(let error) = result { return close(error) }
            selectDatabase()
        }
    }

    private func selectDatabase() {
        guard configuration.url.database != 0 else { return becomeReady() }
        loginStep(["SELECT", String(configuration.url.database)]) { [self] result in
            if case .failure(let error) = result { return close(error) }
            becomeReady()
        }
    }

    private func becomeReady() {
        isReady = true
        onReady()
    }

    private func loginStep(_ arguments: [String], then next: @escaping (Result<RESPValue, RedisError>) -> Void) {
        call(RESPCommand.encode(arguments), timeout: configuration.connectTimeout) { [self] result in
            guard !isClosed else { return }
            next(result)
        }
    }
}

/// Hands a connection's events to its `RedisWire` on the loop.
final class RedisWireHandler: StreamConnectionHandler {
    let wire: LoopBound<RedisWire>

    init(_ wire: LoopBound<RedisWire>) {
        self.wire = wire
    }

    func connection(_ connection: StreamConnection, received bytes: UnsafeRawBufferPointer) {
        wire.value.received(bytes)
    }

    func connectionClosed(_ connection: StreamConnection, error: StreamConnectionError?) {
        let reason = error.map { "\($0)" } ?? "the server closed the connection"
        wire.value.close(.connectionLost(reason))
    }
}
