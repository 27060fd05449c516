import SwitchboardCore

/// The session module: every logged-in session of the server, per app.
///
/// It answers `Login`, `Logout`, `Heartbeat` and `RenewToken`; it listens for
/// `SessionDisconnected`; it publishes `SessionOpened`, `SessionSuspended`, `SessionResumed`,
/// `SessionTimedOut` and `SessionClosed`. Its `run()` ticks on the injected clock to find lost
/// heartbeats, presence timeouts and token expiries. It speaks of sessions only: the server binds
/// them to connections.
public actor Session: Module {
    public nonisolated let name = "session"

    /// How often `run()` looks at deadlines.
    public nonisolated let tickInterval: Duration
    /// The app ids this server serves; nil serves any.
    public nonisolated let allowedAppIds: Set<AppID>?
    private let makeSecret: @Sendable () -> String

    private enum State {
        case idle
        case running(ModuleContext, SessionTable)
    }
    private var state = State.idle

    /// Creates the module serving `allowedAppIds` (nil: any app id). `makeSecret` makes resume
    /// secrets (random by default).
    public init(
        allowedAppIds: Set<AppID>? = nil,
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
        state = .running(context, SessionTable(limits: context.limits, allowedAppIds: allowedAppIds))
        let bus = context.bus
        bus.handle(Login.self) { [self] request throws(RtmError) in try await login(request) }
        bus.handle(Logout.self) { [self] request throws(RtmError) in try await logout(request) }
        bus.handle(Heartbeat.self) { [self] request throws(RtmError) in try await heartbeat(request) }
        bus.handle(RenewToken.self) { [self] request throws(RtmError) in try await renew(request) }
        bus.subscribe(SessionDisconnected.self) { [self] event in await disconnected(event.session) }
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        for await _ in context.clock.ticks(every: tickInterval) { tick() }
    }

    // MARK: Requests

    private func login(_ request: Login) async throws(RtmError) -> LoginGranted {
        let context = try running(Login.operation)
        // Cheap refusals first, so a flood of bad logins costs no token verification.
        try mutateTable(Login.operation) { table throws(RtmError) in try table.checkLogin(request) }
        var grant = TokenGrant(loginExpiresAt: nil)
        if context.bus.hasHandler(VerifyLoginToken.self) {
            grant = try await context.bus.request(
                VerifyLoginToken(appId: request.appId, userId: request.userId, token: request.token))
        }
        // The token check suspended this actor: change the table as it is now, in place.
        let outcome = try mutateTable(Login.operation) { table throws(RtmError) in
            try table.login(request, secret: makeSecret(), tokenExpiresAt: grant.loginExpiresAt, now: context.clock.now)
        }
        switch outcome {
        case .opened(let record, let replaced):
            for old in replaced {
                context.outbox.disconnect(old.id, reason: .sameUidLogin, detail: "the same user logged in elsewhere")
                end(old, reason: .replacedBySameUser, context)
            }
            context.outbox.open(record.id)
            context.bus.publish(SessionOpened(caller: record.caller))
            return granted(record, resumed: false)
        case .resumed(let record, let wasSuspended):
            if wasSuspended { context.bus.publish(SessionResumed(caller: record.caller)) }
            return granted(record, resumed: true)
        }
    }

    private func logout(_ request: Logout) throws(RtmError) -> Done {
        let context = try running(Logout.operation)
        guard let record = try mutateTable(Logout.operation, { $0.remove(request.caller.session) }) else {
            throw RtmError(.notLogin, operation: Logout.operation, reason: "no such session")
        }
        end(record, reason: .logout, context)
        return Done()
    }

    private func heartbeat(_ request: Heartbeat) throws(RtmError) -> Done {
        let context = try running(Heartbeat.operation)
        switch try mutateTable(Heartbeat.operation, { $0.heartbeat(request.caller.session, now: context.clock.now) }) {
        case .unknown: throw RtmError(.notLogin, operation: Heartbeat.operation, reason: "no such session")
        case .alive: break
        case .revived(let record): context.bus.publish(SessionResumed(caller: record.caller))
        }
        return Done()
    }

    private func renew(_ request: RenewToken) async throws(RtmError) -> Done {
        let context = try running(RenewToken.operation)
        guard try mutateTable(RenewToken.operation, { $0.sessions[request.caller.session] != nil }) else {
            throw RtmError(.notLogin, operation: RenewToken.operation, reason: "no such session")
        }
        var grant = TokenGrant(loginExpiresAt: nil)
        if context.bus.hasHandler(VerifyLoginToken.self) {
            do {
                grant = try await context.bus.request(
                    VerifyLoginToken(appId: request.caller.app, userId: request.caller.userId, token: request.token))
            } catch {
                throw RtmError(error.code, operation: RenewToken.operation, reason: error.reason)
            }
        }
        guard try mutateTable(RenewToken.operation, { $0.renew(request.caller.session, tokenExpiresAt: grant.loginExpiresAt) }) else {
            throw RtmError(.notLogin, operation: RenewToken.operation, reason: "the session ended")
        }
        return Done()
    }

    // MARK: Events and time

    private func disconnected(_ session: SessionID) {
        guard case .running(let context, _) = state, let record = try? mutateTable("", { $0.disconnected(session, now: context.clock.now) })
        else { return }
        context.bus.publish(SessionSuspended(caller: record.caller))
    }

    /// Applies deadlines that have passed. `run()` calls this every tick; tests may too.
    public func tick() {
        guard case .running(let context, _) = state,
            let expiries = try? mutateTable("", { $0.sweep(now: context.clock.now, unixSeconds: context.clock.wallMilliseconds / 1000) })
        else { return }
        for expiry in expiries {
            switch expiry {
            case .heartbeatLost(let record):
                context.outbox.disconnect(record.id, reason: .keepAliveTimeout, detail: "no heartbeat received in time")
                context.bus.publish(SessionSuspended(caller: record.caller))
            case .timedOut(let record):
                context.bus.publish(SessionTimedOut(caller: record.caller))
                end(record, reason: .timedOut, context)
            case .tokenWillExpire(let record, let secondsLeft):
                context.outbox.deliver(.session(.tokenPrivilegeWillExpire(secondsLeft: secondsLeft)), to: [record.id])
            case .tokenExpired(let record):
                context.outbox.disconnect(record.id, reason: .tokenExpired, detail: "the login token expired")
                end(record, reason: .tokenExpired, context)
            }
        }
    }

    /// How many sessions exist (live or suspended).
    public var count: Int {
        (try? mutateTable("", { $0.sessions.count })) ?? 0
    }

    // MARK: Helpers

    private func end(_ record: SessionRecord, reason: SessionEndReason, _ context: ModuleContext) {
        context.outbox.release(record.id)
        context.bus.publish(SessionClosed(caller: record.caller, reason: reason))
    }

    private func granted(_ record: SessionRecord, resumed: Bool) -> LoginGranted {
        LoginGranted(
            caller: record.caller, ticket: record.ticket, resumed: resumed,
            heartbeatInterval: record.heartbeatInterval, presenceTimeout: record.presenceTimeout)
    }

    private func running(_ operation: String) throws(RtmError) -> ModuleContext {
        guard case .running(let context, _) = state else { throw notStarted(operation) }
        return context
    }

    private func notStarted(_ operation: String) -> RtmError {
        RtmError(.notInitialized, operation: operation, reason: "the session module has not been started")
    }

    /// Reads or changes the table in place: the state is moved out for the call, so the table's
    /// storage is never copied (a copy would duplicate every session on each login).
    private func mutateTable<T>(
        _ operation: String, _ change: (inout SessionTable) throws(RtmError) -> T
    ) throws(RtmError) -> T {
        guard case .running(let context, var table) = state else { throw notStarted(operation) }
        state = .idle
        defer { state = .running(context, table) }
        return try change(&table)
    }
}
