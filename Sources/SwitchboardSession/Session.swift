import SwitchboardCore

/// The session module: every logged-in session of the server.
///
/// It answers `Login`, `Logout`, `Heartbeat`, `RenewToken` and `SessionsOfUser`; it listens for
/// `ConnectionDropped`; it publishes `SessionOpened`, `SessionSuspended`, `SessionResumed`,
/// `SessionTimedOut` and `SessionClosed`. A ticker on the injected clock finds lost heartbeats,
/// presence timeouts and token expiries.
public actor Session: Module {
    public nonisolated let name = "session"

    /// How often the ticker looks at deadlines.
    public nonisolated let tickInterval: Duration
    /// The app ids this server serves; nil serves any.
    public nonisolated let allowedAppIds: Set<String>?
    private let makeSecret: @Sendable () -> String
    private var table: SessionTable?
    private var context: ModuleContext?
    private var ticker: Task<Void, Never>?
    private var subscription: BusSubscription?

    /// Creates the module serving `allowedAppIds` (nil: any app id). `makeSecret` makes resume
    /// secrets (random by default).
    public init(
        allowedAppIds: Set<String>? = nil,
        tickInterval: Duration = .seconds(1),
        makeSecret: @escaping @Sendable () -> String = Session.randomSecret
    ) {
        self.allowedAppIds = allowedAppIds
        self.tickInterval = tickInterval
        self.makeSecret = makeSecret
    }

    /// A 128-bit random secret as hex.
    public static let randomSecret: @Sendable () -> String = {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    public func start(_ context: ModuleContext) async {
        self.context = context
        table = SessionTable(limits: context.limits, allowedAppIds: allowedAppIds)
        let bus = context.bus
        bus.handle(Login.self) { [self] request throws(RtmError) in try await login(request) }
        bus.handle(Logout.self) { [self] request throws(RtmError) in try await logout(request) }
        bus.handle(Heartbeat.self) { [self] request throws(RtmError) in try await heartbeat(request) }
        bus.handle(RenewToken.self) { [self] request throws(RtmError) in try await renew(request) }
        bus.handle(SessionsOfUser.self) { [self] request in await sessions(of: request.userId) }
        subscription = bus.subscribe(ConnectionDropped.self) { [self] event in await connectionDropped(event) }
        let clock = context.clock
        let interval = tickInterval
        ticker = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self else { return }
                await self.tick()
            }
        }
    }

    public func shutdown() async {
        ticker?.cancel()
        ticker = nil
        subscription?.cancel()
        subscription = nil
    }

    // MARK: Requests

    private func login(_ request: Login) async throws(RtmError) -> LoginGranted {
        guard let context, let current = table else { throw notStarted(Login.operation) }
        // Cheap refusals first, so a flood of bad logins costs no token verification.
        try current.checkNotLoggedIn(request.connection)
        var grant = TokenGrant(loginExpiresAt: nil)
        if context.bus.hasHandler(VerifyLoginToken.self) {
            grant = try await context.bus.request(
                VerifyLoginToken(appId: request.appId, userId: request.userId, token: request.token))
        }
        // The token check may have suspended this actor: read the table only now. It is changed
        // in place: a local copy would duplicate every session on each login.
        guard table != nil else { throw notStarted(Login.operation) }
        let outcome = try table!.login(
            request, secret: makeSecret(), tokenExpiresAt: grant.loginExpiresAt, now: context.clock.now)
        switch outcome {
        case .opened(let record, let replaced):
            for old in replaced {
                if let connection = old.connection {
                    context.outbox.disconnect(connection, reason: .sameUidLogin, detail: "the same user logged in elsewhere")
                }
                end(old, reason: .replacedBySameUser)
            }
            _ = context.outbox.attach(record.id, to: request.connection, received: 0)
            context.bus.publish(SessionOpened(session: record.id, userId: record.userId, connection: request.connection))
            return granted(record, resumed: false, loss: .none)
        case .resumed(let record, let stale):
            if let stale {
                context.outbox.disconnect(stale, reason: .relogin, detail: "the session resumed on a new connection")
            }
            let loss = context.outbox.attach(record.id, to: request.connection, received: request.resume?.received ?? 0)
            context.bus.publish(SessionResumed(session: record.id, userId: record.userId, connection: request.connection))
            return granted(record, resumed: true, loss: loss)
        }
    }

    private func logout(_ request: Logout) throws(RtmError) -> Done {
        guard let record = table?.remove(request.session) else {
            throw RtmError(.notLogin, operation: Logout.operation, reason: "no such session")
        }
        end(record, reason: .logout)
        return Done()
    }

    private func heartbeat(_ request: Heartbeat) throws(RtmError) -> Done {
        guard let context else { throw notStarted(Heartbeat.operation) }
        guard table?.heartbeat(request.session, now: context.clock.now) == true else {
            throw RtmError(.notLogin, operation: Heartbeat.operation, reason: "no such session")
        }
        return Done()
    }

    private func renew(_ request: RenewToken) async throws(RtmError) -> Done {
        guard let context, let record = table?.sessions[request.session] else {
            throw RtmError(.notLogin, operation: RenewToken.operation, reason: "no such session")
        }
        var grant = TokenGrant(loginExpiresAt: nil)
        if context.bus.hasHandler(VerifyLoginToken.self) {
            do {
                grant = try await context.bus.request(
                    VerifyLoginToken(appId: record.appId, userId: record.userId, token: request.token))
            } catch {
                throw RtmError(error.code, operation: RenewToken.operation, reason: error.reason)
            }
        }
        guard table?.renew(request.session, tokenExpiresAt: grant.loginExpiresAt) == true else {
            throw RtmError(.notLogin, operation: RenewToken.operation, reason: "the session ended")
        }
        return Done()
    }

    private func sessions(of userId: UserID) -> [SessionID] {
        table?.sessions(of: userId) ?? []
    }

    // MARK: Events and time

    private func connectionDropped(_ event: ConnectionDropped) {
        guard let context, let record = table?.connectionDropped(event.connection, now: context.clock.now) else { return }
        context.outbox.detach(record.id)
        context.bus.publish(SessionSuspended(session: record.id, userId: record.userId))
    }

    /// Applies deadlines that have passed. The ticker calls this; tests may too.
    public func tick() {
        guard let context, table != nil else { return }
        let expiries = table!.sweep(now: context.clock.now, unixSeconds: context.clock.wallMilliseconds / 1000)
        for expiry in expiries {
            switch expiry {
            case .heartbeatLost(let record, let connection):
                context.outbox.detach(record.id)
                context.outbox.disconnect(connection, reason: .keepAliveTimeout, detail: "no heartbeat received in time")
                context.bus.publish(SessionSuspended(session: record.id, userId: record.userId))
            case .timedOut(let record):
                context.bus.publish(SessionTimedOut(session: record.id, userId: record.userId))
                end(record, reason: .timedOut)
            case .tokenWillExpire(let record, let secondsLeft):
                context.outbox.deliver(.tokenPrivilegeWillExpire(secondsLeft: secondsLeft), to: [record.id])
            case .tokenExpired(let record):
                if let connection = record.connection {
                    context.outbox.disconnect(connection, reason: .tokenExpired, detail: "the login token expired")
                }
                end(record, reason: .tokenExpired)
            }
        }
    }

    /// How many sessions exist (live or suspended).
    public var count: Int { table?.sessions.count ?? 0 }

    // MARK: Helpers

    private func end(_ record: SessionRecord, reason: SessionEndReason) {
        guard let context else { return }
        context.outbox.release(record.id)
        context.bus.publish(SessionClosed(session: record.id, userId: record.userId, reason: reason))
    }

    private func granted(_ record: SessionRecord, resumed: Bool, loss: ResumeLoss) -> LoginGranted {
        LoginGranted(
            session: record.id, ticket: record.ticket, resumed: resumed,
            heartbeatInterval: record.heartbeatInterval, presenceTimeout: record.presenceTimeout, loss: loss)
    }

    private func notStarted(_ operation: String) -> RtmError {
        RtmError(.notInitialized, operation: operation, reason: "the session module has not been started")
    }
}
