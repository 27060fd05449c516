import SwitchboardCore
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
    /// The service its channels belong to: link-state changes are reported per service.
    var serviceType: RtmServiceType { get }
    /// Sends, through `send`, what rebuilds it on the new session; returns the channels it could
    /// not restore.
    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String]
    /// Forgets everything (logout, or a session that ended for good).
    func reset()
    /// Whether the server keeps it when another node of a cluster takes the session over (a
    /// resume that says `historyLost`); what it does not keep is restored then.
    var movesWithSession: Bool { get }
}

extension RestorableState {
    var serviceType: RtmServiceType { .message }
    var movesWithSession: Bool { true }
}

/// The client's connection to its server. It coordinates: the pure `LinkMachine` decides what
/// the link state is and what to do (`+Link`); `PendingRequests` keeps what waits for an answer,
/// swept by one deadline timer (`+Requests`); `PushRouter` turns pushes into events
/// (`+Receiving`). The engine itself owns the connection, the timers and the session ticket.
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

    /// The open connection and its number.
    struct Connection {
        let socket: any ClientSocket
        let generation: Int
    }

    /// The engine's timers: at most one of each runs.
    struct Timers {
        var heartbeats: Task<Void, Never>?
        var retry: Task<Void, Never>?
        var deadline: (task: Task<Void, Never>, at: PortableDuration)?
    }

    let settings: ClientSettings
    let clock: any SwitchboardClock
    /// What opens the connections (`ClientSettings.transport`).
    let transport: any ClientTransport
    let log: LogFile?
    /// How long a request may wait for its answer (a heartbeat's answer is the pong).
    let requestTimeout: PortableDuration = .seconds(10)
    /// How long one connection attempt may take.
    let connectTimeout: PortableDuration = .seconds(5)

    var machine: LinkMachine
    var pending = PendingRequests<Waiter>()
    var connection: Connection?
    /// Increases with every connection, so callbacks of an old one are recognised.
    var generation = 0
    /// Connection attempts so far; they go round the access points.
    var attempts = 0
    var session = SessionTicket()
    var pushes: PushRouter
    /// The lock acquires that wait for a grant.
    let lockWaits = LockWaits()
    var timers = Timers()
    /// Paces the requests of a restore within the server's call budgets.
    var restorePacer = CallPacer()
    var loginResolver: (@Sendable (RtmErrorInfo?) -> Void)?
    var states: [any RestorableState] = []
    /// The service of each channel the last restore could not rebuild.
    var unrestoredServices: [String: RtmServiceType] = [:]
    var destroyed = false
    /// Sockets dropped by `loseConnectionSilently`, still open; closed on `destroy`.
    var silentlyLost: [any ClientSocket] = []

    init(
        settings: ClientSettings, dispatcher: EventDispatcher, clock: any SwitchboardClock, sealer: PayloadSealer? = nil
    ) throws {
        self.settings = settings
        self.clock = clock
        machine = LinkMachine(reconnectTimeout: settings.reconnectTimeout)
        log = settings.log.flatMap { LogFile($0) }
        for warning in settings.warnings { log?.write(.warn, warning) }
        pushes = PushRouter(dispatcher: dispatcher, sealer: sealer, log: log, lockWaits: lockWaits)
        transport = try settings.makeTransport()
    }

    var linkState: RtmLinkState { machine.state }

    /// Messages dropped because they did not open under the client's key.
    var undecryptableMessages: Int { pushes.undecryptableMessages }

    /// Registers state to rebuild when the server has lost the session.
    func keep(_ state: any RestorableState) { states.append(state) }

    // MARK: Calls from the app

    /// Starts a login; `resolve` gets nil on success.
    func login(token: String?, resolve: @escaping @Sendable (RtmErrorInfo?) -> Void) {
        guard !destroyed else { return resolve(Self.destroyedError(OperationName.Session.login.rawValue)) }
        guard machine.acceptsLogin else {
            return resolve(RtmErrorInfo(.duplicateOperation, operation: OperationName.Session.login, reason: "already logged in"))
        }
        session.token = token ?? ""
        session.forget()
        let earlier = loginResolver
        loginResolver = resolve
        for command in machine.handle(.loginRequested(now: clock.now)) {
            if case .cancelEarlierLogin = command {
                earlier?(RtmErrorInfo(.loginCanceled, operation: OperationName.Session.login, reason: "a newer login replaced it"))
            } else {
                apply(command)
            }
        }
    }

    /// Logs out: the session ends at once; a login still under way is canceled.
    func logout(resolve: @escaping CallResolver) {
        guard !destroyed else { return resolve(.failure(Self.destroyedError(OperationName.Session.logout.rawValue))) }
        guard machine.state != .idle else {
            return resolve(.failure(RtmErrorInfo(.notLogin, operation: OperationName.Session.logout, reason: "not logged in")))
        }
        apply(machine.handle(.logoutRequested))
        if machine.loggingOut {
            timers.retry?.cancel()
            timers.heartbeats?.cancel()
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
        issue(operation, as: .call(resolve), trace: RtmRequestTrace.current.map(RtmRequestTrace.fitted), resolve: resolve)
    }

    /// Releases the client: every attempt stops at once, the connection closes, the events end.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if machine.state == .connected, let socket = connection?.socket {
            socket.send(ClientFrame.logout(id: 0).encode())
        }
        apply(machine.handle(.destroyed))
        timers.retry?.cancel()
        timers.deadline?.task.cancel()
        for socket in silentlyLost { socket.close() }
        silentlyLost.removeAll()
        transport.shutdown()
        pushes.dispatcher.finish()
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

    private func issue(_ operation: ClientOperation, as waiter: Waiter, trace: String? = nil, resolve: CallResolver) {
        let name = operation.name
        guard !destroyed else { return resolve(.failure(Self.destroyedError(name))) }
        switch machine.state {
        case .connected where !machine.loggingOut:
            if !send(operation, waiter, trace: trace) {
                resolve(.failure(RtmErrorInfo(.notConnected, operation: name, reason: "the connection is closed")))
            }
        case .idle, .failed:
            resolve(.failure(RtmErrorInfo(.notLogin, operation: name, reason: "log in first")))
        default:
            resolve(.failure(RtmErrorInfo(Self.offlineCode(for: operation), operation: name, reason: "not connected to the server right now")))
        }
    }

    /// The reference's code for a call made while the link is down: its own for stream channels
    /// and presence, `notConnected` for the rest (seed 000: messages, metadata, locks).
    static func offlineCode(for operation: ClientOperation) -> RtmErrorCode {
        switch operation {
        case .stream: .channelNotConnected
        case .presence: .presenceNotConnected
        default: .notConnected
        }
    }

    private static func destroyedError(_ operation: String) -> RtmErrorInfo {
        RtmErrorInfo(.notInitialized, operation: operation, reason: "the client was destroyed")
    }
}
