import Foundation
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// What receives the outcome of an app's call: called once, on the engine, in the order the
/// answers arrive.
typealias CallResolver = @Sendable (Result<Answer, RtmErrorInfo>) -> Void

/// Client-side state that a feature rebuilds when the server has lost the session (a reconnect
/// after the presence timeout): message-channel subscriptions, and later presence states and
/// stream channels.
protocol RestorableState: AnyObject, Sendable {
    /// The channels it holds, listed as affected by link-state changes.
    var channels: [String] { get }
    /// Sends, through `send`, what rebuilds it on the new session; returns the channels it could
    /// not restore.
    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String]
    /// Forgets everything (logout, or a session that ended for good).
    func reset()
}

/// The client's connection to its server. It coordinates: the pure `LinkMachine` decides what
/// the link state is and what to do; `PendingRequests` keeps what waits for an answer, swept by
/// one deadline timer; the engine owns the socket, the heartbeats, the retries and the session
/// ticket, and routes pushes to the app.
///
/// Every call is issued at once and answered through a resolver, so a slow call (a login that
/// retries) never holds up the calls made after it.
actor ClientEngine {
    /// Who waits for a request's answer.
    enum Waiter: Sendable {
        /// An app call.
        case call(CallResolver)
        /// The login of connection `generation`.
        case login(generation: Int)
        /// A heartbeat on connection `generation`.
        case heartbeat(generation: Int)
        /// The app's logout.
        case logout(CallResolver)
        /// A token renewal: the new token is kept only when the server accepts it.
        case renew(token: String, CallResolver)
    }

    private struct Connection {
        let socket: WebSocketConnection
        let generation: Int
    }

    private let settings: ClientSettings
    private let dispatcher: EventDispatcher
    private let clock: any SwitchboardClock
    /// Opens incoming bodies when client-side encryption is on.
    private let sealer: PayloadSealer?
    private let group: EventLoopGroup
    /// The SDK log file, when the config asks for one.
    private let log: LogFile?
    /// How long a request may wait for its answer (a heartbeat's answer is the pong).
    private let requestTimeout: Duration = .seconds(10)
    /// How long one connection attempt may take.
    private let connectTimeout: Duration = .seconds(5)

    private var machine: LinkMachine
    private var pending = PendingRequests<Waiter>()
    private var connection: Connection?
    /// Increases with every connection, so callbacks of an old one are recognised.
    private var generation = 0
    private var attempts = 0
    private var token = ""
    private var ticket: ResumeTicket?
    /// Pushes of the current session received on any of its connections; a resume tells the
    /// server, which sends again what came after.
    private var receivedPushes: UInt64 = 0
    private var loginResolver: (@Sendable (RtmErrorInfo?) -> Void)?
    private var states: [any RestorableState] = []
    private var heartbeats: Task<Void, Never>?
    private var retry: Task<Void, Never>?
    private var deadlineTimer: (task: Task<Void, Never>, deadline: Duration)?
    private var destroyed = false
    /// Sockets dropped by `loseConnectionSilently`, still open; closed on `destroy`.
    private var silentlyLost: [WebSocketConnection] = []
    /// Messages dropped because they did not open under the client's key (see `opened`).
    private(set) var undecryptableMessages = 0

    init(
        settings: ClientSettings, dispatcher: EventDispatcher, clock: any SwitchboardClock, sealer: PayloadSealer? = nil
    ) throws {
        self.settings = settings
        self.dispatcher = dispatcher
        self.clock = clock
        self.sealer = sealer
        machine = LinkMachine(reconnectTimeout: settings.reconnectTimeout)
        log = settings.log.flatMap { LogFile($0) }
        group = try EventLoopGroup(threads: 1)
    }

    var linkState: RtmLinkState { machine.state }

    /// Registers state to rebuild when the server has lost the session.
    func keep(_ state: any RestorableState) { states.append(state) }

    // MARK: Calls from the app

    /// Starts a login; `resolve` gets nil on success.
    func login(token: String?, resolve: @escaping @Sendable (RtmErrorInfo?) -> Void) {
        guard !destroyed else { return resolve(Self.destroyedError("login")) }
        guard machine.acceptsLogin else {
            return resolve(RtmErrorInfo(.duplicateOperation, operation: "login", reason: "already logged in"))
        }
        self.token = token ?? ""
        ticket = nil
        let earlier = loginResolver
        loginResolver = resolve
        for command in machine.handle(.loginRequested(now: clock.now)) {
            if case .cancelEarlierLogin = command {
                earlier?(RtmErrorInfo(.loginCanceled, operation: "login", reason: "a newer login replaced it"))
            } else {
                apply(command)
            }
        }
    }

    /// Logs out: the session ends at once; a login still under way is canceled.
    func logout(resolve: @escaping CallResolver) {
        guard !destroyed else { return resolve(.failure(Self.destroyedError("logout"))) }
        guard machine.state != .idle else {
            return resolve(.failure(RtmErrorInfo(.notLogin, operation: "logout", reason: "not logged in")))
        }
        apply(machine.handle(.logoutRequested))
        if machine.loggingOut {
            retry?.cancel()
            heartbeats?.cancel()
            if !send(.session(.logout), .logout(resolve)) { apply(machine.handle(.logoutFinished)) }
        } else {
            resolve(.success(.done))
        }
    }

    /// Replaces the login token; the new one is used for later reconnects only once the server
    /// has accepted it.
    func renewToken(_ token: String, resolve: @escaping CallResolver) {
        issue(.session(.renewToken(token: token)), as: .renew(token: token, resolve), resolve: resolve)
    }

    /// Sends an app's request; `resolve` gets the answer.
    func call(_ operation: ClientOperation, resolve: @escaping CallResolver) {
        issue(operation, as: .call(resolve), resolve: resolve)
    }

    /// Sends an app's request and waits for its answer.
    func call(_ operation: ClientOperation) async -> Result<Answer, RtmErrorInfo> {
        let answer = OneShot<Result<Answer, RtmErrorInfo>>()
        call(operation) { answer.fulfil($0) }
        return await answer.value
    }

    /// Releases the client: every attempt stops at once, the connection closes, the events end.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if machine.state == .connected, let socket = connection?.socket {
            socket.send(OutboundFrame.binary(ClientFrame.logout(id: 0).encode()))
        }
        apply(machine.handle(.destroyed))
        retry?.cancel()
        deadlineTimer?.task.cancel()
        for socket in silentlyLost { socket.close(code: .normalClosure, reason: "") }
        silentlyLost.removeAll()
        // Joining the loop thread blocks: do it off Swift's cooperative pool.
        let group = group
        Thread.detachNewThread { group.shutdown() }
        dispatcher.finish()
    }

    /// Behaves as if the network swallowed the connection without a word: what still arrives on it
    /// is ignored and the client reconnects, while the server believes the old connection alive
    /// (for tests of resume over half-open connections).
    func loseConnectionSilently() {
        guard machine.state == .connected, let socket = connection?.socket else { return }
        silentlyLost.append(socket)
        connection = nil
        closeConnection()
        apply(machine.handle(.connectionLost(.heartbeatTimeout, .keepAliveTimeout, now: clock.now)))
    }

    private func issue(_ operation: ClientOperation, as waiter: Waiter, resolve: CallResolver) {
        let name = operation.name
        guard !destroyed else { return resolve(.failure(Self.destroyedError(name))) }
        switch machine.state {
        case .connected where !machine.loggingOut:
            if !send(operation, waiter) {
                resolve(.failure(RtmErrorInfo(.notConnected, operation: name, reason: "the connection is closed")))
            }
        case .idle, .failed:
            resolve(.failure(RtmErrorInfo(.notLogin, operation: name, reason: "log in first")))
        default:
            resolve(.failure(RtmErrorInfo(.notConnected, operation: name, reason: "not connected to the server right now")))
        }
    }

    // MARK: Requests on the connection

    /// Sends a request on the current connection, whatever the link state; false when there is no
    /// open connection (the waiter is not resolved then).
    @discardableResult
    private func send(_ operation: ClientOperation, _ waiter: Waiter) -> Bool {
        guard let socket = connection?.socket else { return false }
        let id = pending.add(operation.name, deadline: clock.now + requestTimeout, waiter: waiter)
        guard socket.send(OutboundFrame.binary(ClientFrame(id: id, operation).encode())) else {
            _ = pending.take(id)
            return false
        }
        armDeadlineTimer()
        return true
    }

    /// Sends a request while the session is being restored and waits for its answer.
    private func sendWhileRestoring(_ operation: ClientOperation) async -> Result<Answer, RtmErrorInfo> {
        let answer = OneShot<Result<Answer, RtmErrorInfo>>()
        if !send(operation, .call({ answer.fulfil($0) })) {
            return .failure(RtmErrorInfo(.notConnected, operation: operation.name, reason: "the connection is closed"))
        }
        return await answer.value
    }

    private func resolve(_ waiter: Waiter, _ result: Result<Answer, RtmErrorInfo>) {
        switch waiter {
        case .call(let resolve):
            resolve(result)
        case .login(let loginGeneration):
            guard loginGeneration == generation else { return }
            loginAnswered(result)
        case .heartbeat(let heartbeatGeneration):
            guard heartbeatGeneration == generation, case .failure = result else { return }
            apply(machine.handle(.connectionLost(.heartbeatTimeout, .keepAliveTimeout, now: clock.now)))
        case .logout(let resolve):
            apply(machine.handle(.logoutFinished))
            resolve(.success(.done))
        case .renew(let token, let resolve):
            if case .success = result { self.token = token }
            resolve(result)
        }
    }

    private func loginAnswered(_ result: Result<Answer, RtmErrorInfo>) {
        switch result {
        case .success(.session(.login(let accepted))):
            ticket = accepted.ticket
            if accepted.loss.droppedPushes > 0 {
                let channels = accepted.loss.channels.map(\.name).joined(separator: ", ")
                log?.write(.warn, "resumed past the server's resume bound: \(accepted.loss.droppedPushes) pushes lost (\(channels))")
            }
            apply(machine.handle(.loggedIn(resumed: accepted.resumed, presenceTimeout: accepted.presenceTimeout, now: clock.now)))
        case .success:
            let odd = RtmErrorInfo(.loginRejected, operation: "login", reason: "unexpected answer to login")
            apply(machine.handle(.attemptFailed(odd, now: clock.now)))
        case .failure(let error):
            apply(machine.handle(.attemptFailed(error, now: clock.now)))
        }
    }

    private func armDeadlineTimer() {
        guard let earliest = pending.earliestDeadline else {
            deadlineTimer?.task.cancel()
            deadlineTimer = nil
            return
        }
        if let timer = deadlineTimer, timer.deadline <= earliest { return }
        deadlineTimer?.task.cancel()
        let clock = clock
        let task = Task { [weak self] in
            do { try await clock.sleep(until: earliest) } catch { return }
            await self?.sweepDeadlines()
        }
        deadlineTimer = (task, earliest)
    }

    private func sweepDeadlines() {
        deadlineTimer = nil
        for (operation, waiter) in pending.takeExpired(now: clock.now) {
            let code = PendingRequests<Waiter>.timeoutCode(for: operation)
            resolve(waiter, .failure(RtmErrorInfo(code, operation: operation, reason: "no answer from the server in time")))
        }
        armDeadlineTimer()
    }

    // MARK: Commands of the link machine

    private func apply(_ commands: [LinkMachine.Command]) {
        for command in commands { apply(command) }
    }

    private func apply(_ command: LinkMachine.Command) {
        switch command {
        case .report(let change): report(change)
        case .connect: connect()
        case .retry(let pause): scheduleRetry(after: pause)
        case .closeConnection: closeConnection()
        case .startHeartbeats: startHeartbeats()
        case .finishLogin(let error):
            let resolve = loginResolver
            loginResolver = nil
            resolve?(error)
        case .cancelEarlierLogin: break
        case .restoreSession: restoreSession()
        case .forgetSession:
            ticket = nil
            if machine.state == .idle || machine.state == .failed { for state in states { state.reset() } }
        }
    }

    private func report(_ change: LinkMachine.Change) {
        let affected = change.affectsChannels ? states.flatMap(\.channels).sorted() : []
        log?.write(
            change.state == .failed ? .error : .info,
            "link \(change.previous) -> \(change.state) (\(change.operation), \(change.reason))")
        dispatcher.emit(
            .linkState(
                RtmLinkStateEvent(
                    currentState: change.state, previousState: change.previous, serviceType: .message,
                    operation: change.operation, reasonCode: change.reason, affectedChannels: affected,
                    unrestoredChannels: change.unrestoredChannels, isResumed: change.isResumed,
                    timestamp: clock.wallMilliseconds)))
    }

    /// Opens a connection to the next access point and logs in on it.
    private func connect() {
        closeConnection()
        let current = generation
        let address = settings.servers[attempts % settings.servers.count]
        attempts += 1
        let inbox = SocketInbox()
        let (timeout, tls, proxy, group) = (connectTimeout, settings.tls, settings.proxy, group)
        Task { [weak self] in
            do {
                let socket = try await WebSocketClient.connect(
                    to: address.url, subprotocols: [Wire.subprotocol], timeout: timeout, tls: tls, proxy: proxy,
                    group: group, handler: inbox)
                await self?.opened(socket, inbox: inbox, generation: current)
            } catch {
                await self?.connectFailed(RtmErrorInfo.connectFailure(error, url: address.url), generation: current)
            }
        }
    }

    private func opened(_ socket: WebSocketConnection, inbox: SocketInbox, generation current: Int) {
        guard current == generation, !destroyed else {
            socket.close(code: .normalClosure, reason: "superseded")
            return
        }
        connection = Connection(socket: socket, generation: current)
        Task { [weak self] in
            for await item in inbox.stream { await self?.received(item, generation: current) }
        }
        var resume = ticket
        resume?.received = receivedPushes
        let login = Login(
            appId: settings.appId, userId: settings.userId, token: token, heartbeatInterval: settings.heartbeatInterval,
            presenceTimeout: settings.presenceTimeout, resume: resume)
        if !send(.session(.login(login)), .login(generation: current)) {
            connectFailed(RtmErrorInfo(.notConnected, operation: "login", reason: "the connection closed"), generation: current)
        }
    }

    private func connectFailed(_ error: RtmErrorInfo, generation current: Int) {
        guard current == generation, !destroyed else { return }
        apply(machine.handle(.attemptFailed(error, now: clock.now)))
    }

    /// Closes the current connection and fails what waits on it. Callbacks of the old connection
    /// are ignored from now on.
    private func closeConnection() {
        heartbeats?.cancel()
        heartbeats = nil
        generation += 1
        connection?.socket.close(code: .normalClosure, reason: "")
        connection = nil
        for (operation, waiter) in pending.takeAll() {
            resolve(waiter, .failure(RtmErrorInfo(.notConnected, operation: operation, reason: "the connection closed")))
        }
        armDeadlineTimer()
    }

    private func scheduleRetry(after pause: Duration) {
        retry?.cancel()
        let clock = clock
        retry = Task { [weak self] in
            do { try await clock.sleep(for: pause) } catch { return }
            await self?.retryDue()
        }
    }

    private func retryDue() {
        guard !destroyed else { return }
        apply(machine.handle(.retryDue(now: clock.now)))
    }

    private func startHeartbeats() {
        heartbeats?.cancel()
        let interval = Duration.seconds(settings.heartbeatInterval)
        let current = generation
        let clock = clock
        heartbeats = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self, await self.heartbeat(generation: current) else { return }
            }
        }
    }

    /// Sends one heartbeat; false when the connection is gone.
    private func heartbeat(generation current: Int) -> Bool {
        guard current == generation, machine.state == .connected else { return false }
        return send(.session(.heartbeat), .heartbeat(generation: current))
    }

    private func restoreSession() {
        let states = states
        Task { [weak self] in
            guard let self else { return }
            var unrestored: [String] = []
            for state in states {
                unrestored += await state.restore { operation in await self.sendWhileRestoring(operation) }
            }
            await self.restored(unrestored)
        }
    }

    private func restored(_ unrestored: [String]) {
        apply(machine.handle(.restored(unrestored: unrestored)))
    }

    // MARK: What arrives

    private func received(_ item: SocketInbox.Item, generation current: Int) {
        guard current == generation else { return }
        switch item {
        case .frame(let frame):
            receive(frame)
        case .undecodable:
            break
        case .closed:
            if machine.state == .connected {
                apply(machine.handle(.connectionLost(.networkChange, .connectionError, now: clock.now)))
            } else {
                // Closed while logging in: the attempt failed (its waiters are now stale).
                closeConnection()
                apply(machine.handle(.attemptFailed(
                    RtmErrorInfo(.notConnected, operation: "login", reason: "the connection closed"), now: clock.now)))
            }
        }
    }

    private func receive(_ frame: ServerFrame) {
        switch frame {
        case .answer(let id, let answer):
            // Counted here, in arrival order: a new session starts from zero before its first push.
            if case .session(.login(let accepted)) = answer, !accepted.resumed { receivedPushes = 0 }
            guard let (_, waiter) = pending.take(id) else { return }
            resolve(waiter, .success(answer))
        case .error(let id, let error):
            log?.write(.warn, "\(error)")
            guard let (operation, waiter) = pending.take(id) else { return }
            resolve(waiter, .failure(RtmErrorInfo(RtmError(error.code, operation: operation, reason: error.reason))))
        case .push(let push):
            receivedPushes += 1
            route(push)
        case .closing(let reason, _):
            switch LinkMachine.meaning(ofClosing: reason) {
            case .reconnect: apply(machine.handle(.connectionLost(.serverTimeout, .keepAliveTimeout, now: clock.now)))
            case .ignore: break
            case .fail(let failure): apply(machine.handle(.rejected(failure)))
            }
        }
    }

    /// Hands a push to the app: one line per push family.
    private func route(_ push: Push) {
        switch push {
        case .message(let delivery): if let delivery = opened(delivery) { dispatcher.emit(.message(RtmMessageEvent(delivery))) }
        case .session(.tokenPrivilegeWillExpire): dispatcher.emit(.tokenPrivilegeWillExpire(channel: nil))
        }
    }

    /// `delivery` with its body opened when encryption is on; `nil` when it does not open (another
    /// key or mode, a plain body, a changed byte): such a message is counted and never delivered.
    private func opened(_ delivery: MessageDelivery) -> MessageDelivery? {
        guard let sealer else { return delivery }
        do {
            var opened = delivery
            opened.payload = try sealer.open(delivery.payload)
            return opened
        } catch {
            undecryptableMessages += 1
            log?.write(.warn, "dropped a message from \(delivery.publisher) in \(delivery.channelName) that does not open: \(error)")
            return nil
        }
    }

    private static func destroyedError(_ operation: String) -> RtmErrorInfo {
        RtmErrorInfo(.notInitialized, operation: operation, reason: "the client was destroyed")
    }
}
