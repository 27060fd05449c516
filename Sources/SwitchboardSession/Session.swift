import SwitchboardCore

/// The session module: every logged-in session of the server, per app.
///
/// It answers `Login`, `Logout`, `Heartbeat` and `RenewToken`, and for the server
/// `DisconnectUser`, `ListUserSessions`, `SessionStatistics` and `SessionsByApp`, and for the cluster relay
/// `EndReplacedSession`; it asks the relay, when there is one, `OpenRelay`, `ClaimUser` and
/// `CloseRelay` for its users; it listens for `SessionDisconnected`; it publishes `SessionOpened`, `SessionSuspended`, `SessionResumed`,
/// `SessionTimedOut` and `SessionClosed`. Its `run()` ticks on the injected clock to find lost
/// heartbeats, presence timeouts and token expiries. It speaks of sessions only: the server binds
/// them to connections. The sessions live in a `SessionStore`, called one operation at a time
/// (`OneAtATime`), so events go out in the store's order.
public actor Session: Module {
    public nonisolated let name = "session"

    /// How often `run()` looks at deadlines.
    public nonisolated let tickInterval: Duration
    /// The app ids this module serves; nil serves those the server's limits book serves (which a
    /// reload changes).
    public nonisolated let allowedAppIds: Set<AppID>?
    private let makeSecret: @Sendable () -> String
    private let givenStore: (any SessionStore)?
    private let turns = OneAtATime()
    /// Whether this node's session numbers come from its own block (cluster mode) yet.
    private var sessionsNumbered = false

    private enum State {
        case idle
        case running(ModuleContext, any SessionStore)
    }
    private var state = State.idle

    /// Creates the module serving `allowedAppIds` (nil: the apps its limits book serves) over
    /// `store` (nil: one in memory, with the limits book the module is started with).
    /// `makeSecret` makes resume secrets (random by default).
    public init(
        allowedAppIds: Set<AppID>? = nil,
        tickInterval: Duration = .seconds(1),
        store: (any SessionStore)? = nil,
        makeSecret: @escaping @Sendable () -> String = Session.randomSecret
    ) {
        self.allowedAppIds = allowedAppIds
        self.tickInterval = tickInterval
        self.givenStore = store
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
        state = .running(context, givenStore ?? InMemorySessionStore(limits: context.limitsBook, allowedAppIds: allowedAppIds))
        let bus = context.bus
        bus.handle(Login.self) { [self] request throws(RtmError) in try await login(request) }
        bus.handle(Logout.self) { [self] request throws(RtmError) in try await logout(request) }
        bus.handle(Heartbeat.self) { [self] request throws(RtmError) in try await heartbeat(request) }
        bus.handle(RenewToken.self) { [self] request throws(RtmError) in try await renew(request) }
        bus.handle(DisconnectUser.self) { [self] request throws(RtmError) in try await disconnectUser(request) }
        bus.handle(EndReplacedSession.self) { [self] request throws(RtmError) in try await endReplaced(request.caller) }
        bus.handle(EndMovedSession.self) { [self] request throws(RtmError) in try await endMoved(request.caller) }
        bus.handle(ListUserSessions.self) { [self] request throws(RtmError) in try await listSessions(request) }
        bus.handle(SessionStatistics.self) { [self] request throws(RtmError) in
            try await running(SessionStatistics.operation).1.counts(in: request.app)
        }
        bus.handle(SessionsByApp.self) { [self] _ throws(RtmError) in
            try await running(SessionsByApp.operation).1.sessionsByApp()
        }
        bus.subscribe(SessionDisconnected.self) { [self] event in await disconnected(event.session) }
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        for await _ in context.clock.ticks(every: tickInterval) { await tick() }
    }

    // MARK: Requests

    private func login(_ request: Login) async throws(RtmError) -> LoginGranted {
        let (context, store) = try running(Login.operation)
        // Cheap refusals first, so a flood of bad logins costs no token verification.
        try await store.checkLogin(request)
        var grant = TokenGrant(loginExpiresAt: nil)
        if context.bus.hasHandler(VerifyLoginToken.self) {
            grant = try await context.bus.request(
                VerifyLoginToken(appId: request.appId, userId: request.userId, token: request.token))
        }
        try await numberSessions(context, store)
        if let ticket = request.resume, context.bus.hasHandler(AdoptSession.self), try await !store.contains(ticket.session),
            let granted = try await takeOver(request, ticket, grant, context, store)
        {
            return granted
        }
        let answer = try await turns.run { () async throws(RtmError) in
            let outcome = try await store.login(
                request, secret: makeSecret(), tokenExpiresAt: grant.loginExpiresAt, now: context.clock.wallNow)
            switch outcome {
            case .opened(let record, let replaced):
                for old in replaced { endAsReplaced(old, context) }
                context.outbox.open(record.id)
                context.bus.publish(SessionOpened(caller: record.caller))
                return granted(record, resumed: false)
            case .resumed(let record, let wasSuspended):
                if wasSuspended { context.bus.publish(SessionResumed(caller: record.caller)) }
                return granted(record, resumed: true)
            }
        }
        try await openRelay(for: answer.caller, claiming: answer.resumed ? nil : answer, context, store)
        return answer
    }

    /// In cluster mode (a relay answers `ReserveSessionNumbers`), numbers this node's sessions
    /// from a block of its own, once, before the first session: a number then names one session
    /// on every node, so another node can take a session over under its number.
    private func numberSessions(_ context: ModuleContext, _ store: any SessionStore) async throws(RtmError) {
        guard !sessionsNumbered, context.bus.hasHandler(ReserveSessionNumbers.self) else { return }
        try await turns.run { () async throws(RtmError) in
            guard !sessionsNumbered else { return }
            let base: UInt64
            do throws(RtmError) {
                base = try await context.bus.request(ReserveSessionNumbers())
            } catch {
                throw RtmError(.loginTimeout, operation: Login.operation, reason: error.reason)
            }
            try await store.numberSessions(after: base)
            sessionsNumbered = true
        }
    }

    /// Takes over the session `ticket` names from the node that holds it (cluster mode: its
    /// client reconnected here): the relay checks the ticket and records the session as this
    /// node's; the presence module moves its memberships here, the message router subscribes
    /// it again to its channels, the other modules move their share (`SessionTakenOver`), and
    /// the former node, if alive, ends its copy. Nil when no other node holds such a session (the
    /// login is then an ordinary one).
    private func takeOver(
        _ request: Login, _ ticket: ResumeTicket, _ grant: TokenGrant, _ context: ModuleContext, _ store: any SessionStore
    ) async throws(RtmError) -> LoginGranted? {
        let user = UserKey(request.appId, request.userId)
        let limits = context.limits(for: user.app)
        let presenceTimeout = limits.sessions.clampedPresenceTimeout(request.presenceTimeout)
        let former: String?
        do {
            former = try await context.bus.request(AdoptSession(user: user, ticket: ticket, presenceTimeout: presenceTimeout))
        } catch {
            throw RtmError(.loginTimeout, operation: Login.operation, reason: error.reason)
        }
        guard let former else { return nil }
        let record = SessionRecord(
            caller: Caller(app: user.app, userId: user.userId, session: ticket.session), secret: ticket.secret,
            heartbeatInterval: limits.sessions.clampedHeartbeatInterval(request.heartbeatInterval),
            presenceTimeout: presenceTimeout, lastSeen: context.clock.wallNow, suspendedAt: nil, tokenExpiresAt: grant.loginExpiresAt)
        let caller = record.caller
        try await turns.run { () async throws(RtmError) in
            for old in try await store.adopt(record) { endAsReplaced(old, context) }
            context.outbox.open(record.id, numberedFrom: ticket.received)
            context.bus.publish(SessionOpened(caller: caller))
        }
        var channels: [ChannelAddress] = [ChannelAddress(.user, user.userId)]
        do {
            if context.bus.hasHandler(OpenRelay.self) { _ = try await context.bus.request(OpenRelay(.user(user))) }
            var memberships: [HeldMembership] = []
            if context.bus.hasHandler(TakeOverMemberships.self) {
                memberships = try await context.bus.request(TakeOverMemberships(caller: caller, formerNode: former))
            }
            await context.bus.publishAndWait(SessionTakenOver(caller: caller, formerNode: former))
            if context.bus.hasHandler(RestoreSubscriptions.self) {
                _ = try await context.bus.request(RestoreSubscriptions(caller: caller, memberships: memberships))
            }
            channels += memberships.map { ChannelAddress($0.channel.type, $0.channel.name) }
            _ = try await context.bus.request(AnnounceTakeOver(caller: caller, formerNode: former))
        } catch {
            try? await turns.run { () async throws(RtmError) in
                guard let record = try await store.remove(caller.session) else { return }
                end(record, reason: .logout, context)
            }
            // The app's concurrent users counted across the nodes say so themselves; anything else
            // is the cluster not reachable now.
            let code: RtmErrorCode = error.code == .loginNoServerResources ? error.code : .loginTimeout
            throw RtmError(code, operation: Login.operation, reason: "the session could not be taken over from \(former): \(error.reason)")
        }
        let loss = ResumeLoss(droppedPushes: 0, channels: Array(channels.prefix(ResumeLoss.maxChannels)), historyLost: true)
        return LoginGranted(
            caller: caller, ticket: record.ticket, resumed: true, heartbeatInterval: record.heartbeatInterval,
            presenceTimeout: record.presenceTimeout, takeOverLoss: loss)
    }

    /// With other nodes (a relay handles `OpenRelay`), makes sure messages sent to the user on
    /// any of them reach this node before the login is answered, and, for a new session
    /// (`claiming`), that the user's sessions on other nodes end as replaced (`ClaimUser`); when
    /// either cannot be done, the session ends again and the login fails with the relay's timeout.
    private func openRelay(
        for caller: Caller, claiming grant: LoginGranted?, _ context: ModuleContext, _ store: any SessionStore
    ) async throws(RtmError) {
        guard context.bus.hasHandler(OpenRelay.self) else { return }
        do {
            _ = try await context.bus.request(OpenRelay(.user(caller.user)))
            if let grant, context.bus.hasHandler(ClaimUser.self) {
                _ = try await context.bus.request(
                    ClaimUser(caller: caller, secret: grant.ticket.secret, presenceTimeout: grant.presenceTimeout))
            }
        } catch {
            try? await turns.run { () async throws(RtmError) in
                guard let record = try await store.remove(caller.session) else { return }
                end(record, reason: .logout, context)
            }
            throw RtmError(error.code, operation: Login.operation, reason: error.reason)
        }
    }

    private func logout(_ request: Logout) async throws(RtmError) -> Done {
        let (context, store) = try running(Logout.operation)
        let done = try await turns.run { () async throws(RtmError) in
            guard let record = try await store.remove(request.caller.session) else {
                throw RtmError(.notLogin, operation: Logout.operation, reason: "no such session")
            }
            end(record, reason: .logout, context)
            return Done()
        }
        await closeRelay(for: request.caller.user, context)
        return done
    }

    /// With other nodes (a relay handles `CloseRelay`), returns once this node stopped listening
    /// for `user`'s messages, if none of its sessions is left here: from then on a message to a
    /// user online nowhere is answered `channelReceiverOffline` on every node.
    private func closeRelay(for user: UserKey, _ context: ModuleContext) async {
        guard context.bus.hasHandler(CloseRelay.self) else { return }
        do {
            _ = try await context.bus.request(CloseRelay(.user(user)))
        } catch {
            context.log(.warning, "other nodes may take \(user.userId) for online a while longer: \(error)")
        }
    }

    private func heartbeat(_ request: Heartbeat) async throws(RtmError) -> Done {
        let (context, store) = try running(Heartbeat.operation)
        return try await turns.run { () async throws(RtmError) in
            switch try await store.heartbeat(request.caller.session, now: context.clock.wallNow) {
            case .unknown: throw RtmError(.notLogin, operation: Heartbeat.operation, reason: "no such session")
            case .alive: break
            case .revived(let record): context.bus.publish(SessionResumed(caller: record.caller))
            }
            return Done()
        }
    }

    private func renew(_ request: RenewToken) async throws(RtmError) -> Done {
        let (context, store) = try running(RenewToken.operation)
        guard try await store.contains(request.caller.session) else {
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
        guard try await store.renew(request.caller.session, tokenExpiresAt: grant.loginExpiresAt) else {
            throw RtmError(.notLogin, operation: RenewToken.operation, reason: "the session ended")
        }
        return Done()
    }

    /// Ends every session of a user at once: each client is told `kickedOutByServer` and its
    /// connection closed, then the session ends as a logout's does.
    private func disconnectUser(_ request: DisconnectUser) async throws(RtmError) -> Int {
        let (context, store) = try running(DisconnectUser.operation)
        try Validation.checkUserId(request.userId, limits: context.limits, operation: DisconnectUser.operation)
        let user = UserKey(request.caller.app, request.userId)
        let ended = try await turns.run { () async throws(RtmError) in
            let ended = try await store.removeAll(of: user)
            for record in ended {
                context.outbox.disconnect(record.id, reason: .kickedOutByServer, detail: request.detail)
                end(record, reason: .kickedByServer, context)
            }
            return ended.count
        }
        if ended > 0 { await closeRelay(for: user, context) }
        return ended
    }

    /// Ends a session of this node that a later login of its user on another node replaced, as
    /// one replaced here ends: its client is told `sameUidLogin`.
    private func endReplaced(_ caller: Caller) async throws(RtmError) -> Done {
        let (context, store) = try running(EndReplacedSession.operation)
        let ended = try await turns.run { () async throws(RtmError) -> Bool in
            guard let record = try await store.remove(caller.session) else { return false }
            endAsReplaced(record, context)
            return true
        }
        if ended { await closeRelay(for: caller.user, context) }
        return Done()
    }

    /// Ends this node's copy of a session another node took over: its old connection, if any, is
    /// told `relogin` (the session resumed elsewhere), and the modules drop what they keep of it
    /// here (`movedToAnotherNode`).
    private func endMoved(_ caller: Caller) async throws(RtmError) -> Done {
        let (context, store) = try running(EndMovedSession.operation)
        let ended = try await turns.run { () async throws(RtmError) -> Bool in
            guard let record = try await store.remove(caller.session) else { return false }
            context.outbox.disconnect(record.id, reason: .relogin, detail: "the session resumed on another node")
            end(record, reason: .movedToAnotherNode, context)
            return true
        }
        if ended { await closeRelay(for: caller.user, context) }
        return Done()
    }

    /// Ends `record`, replaced by a later login of its user: its client is told `sameUidLogin`.
    private func endAsReplaced(_ record: SessionRecord, _ context: ModuleContext) {
        context.outbox.disconnect(record.id, reason: .sameUidLogin, detail: "the same user logged in elsewhere")
        end(record, reason: .replacedBySameUser, context)
    }

    /// A user's sessions, oldest first, read in the module's turn like every other operation.
    private func listSessions(_ request: ListUserSessions) async throws(RtmError) -> [UserSessionSummary] {
        let (context, store) = try running(ListUserSessions.operation)
        try Validation.checkUserId(request.userId, limits: context.limits, operation: ListUserSessions.operation)
        let user = UserKey(request.caller.app, request.userId)
        let records = try await turns.run { () async throws(RtmError) in try await store.sessions(of: user) }
        return records.map { record in
            UserSessionSummary(
                session: record.id, lastSeen: record.lastSeen, suspendedAt: record.suspendedAt,
                heartbeatInterval: record.heartbeatInterval, presenceTimeout: record.presenceTimeout,
                tokenExpiresAt: record.tokenExpiresAt)
        }
    }

    // MARK: Events and time

    private func disconnected(_ session: SessionID) async {
        guard case .running(let context, let store) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                guard let record = try await store.disconnected(session, now: context.clock.wallNow) else { return }
                context.bus.publish(SessionSuspended(caller: record.caller))
            }
        } catch {
            context.log(.error, "cannot suspend \(session): \(error)")
        }
    }

    /// Applies deadlines that have passed. `run()` calls this every tick; tests may too.
    public func tick() async {
        guard case .running(let context, let store) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                let expiries = try await store.sweep(now: context.clock.wallNow)
                for expiry in expiries { expired(expiry, context) }
            }
        } catch {
            context.log(.error, "cannot apply session deadlines: \(error)")
        }
    }

    private func expired(_ expiry: SessionExpiry, _ context: ModuleContext) {
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

    /// How many sessions exist (live or suspended).
    public var count: Int {
        get async {
            guard case .running(_, let store) = state else { return 0 }
            return (try? await store.count()) ?? 0
        }
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

    private func running(_ operation: String) throws(RtmError) -> (ModuleContext, any SessionStore) {
        guard case .running(let context, let store) = state else {
            throw RtmError(.notInitialized, operation: operation, reason: "the session module has not been started")
        }
        return (context, store)
    }
}
