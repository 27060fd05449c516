import Foundation
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The client's connection to its server: login, requests and their answers, heartbeats,
/// automatic reconnection with session resume, and re-subscription after a lost session.
actor ClientEngine {
    private let settings: ClientSettings
    private let dispatcher: EventDispatcher
    private let clock: any SwitchboardClock
    /// Opens incoming bodies when client-side encryption is on.
    private let sealer: PayloadSealer?
    private let group: EventLoopGroup
    /// How long a request may wait for its answer.
    private let requestTimeout: Duration = .seconds(10)
    /// How long a heartbeat may wait for its answer before the link counts as lost.
    private let heartbeatTimeout: Duration = .seconds(10)
    /// How long one connection attempt may take.
    private let connectTimeout: Duration = .seconds(5)

    private var state: RtmLinkState = .idle
    private var token = ""
    private var ticket: ResumeTicket?
    /// Pushes of the current session received on any of its connections; a resume tells the
    /// server, which sends again what came after.
    private var receivedPushes: UInt64 = 0
    /// The channels the user asked for, with their features: restored after a lost session.
    private var subscriptions: [String: RtmSubscribeChannelFeature] = [:]
    private var socket: WebSocketConnection?
    /// Increases with every connection, so stale callbacks are recognised.
    private var generation = 0
    private var nextRequestId: UInt32 = 0
    private var pending: [UInt32: CheckedContinuation<ServerFrame, Never>] = [:]
    private var heartbeatTask: Task<Void, Never>?
    private var reconnectTask: Task<Void, Never>?
    private var destroyed = false
    /// Messages dropped because they did not open under the client's key (see `opened`).
    private(set) var undecryptableMessages = 0

    init(
        settings: ClientSettings, dispatcher: EventDispatcher, clock: any SwitchboardClock, sealer: PayloadSealer? = nil
    ) throws {
        self.settings = settings
        self.dispatcher = dispatcher
        self.clock = clock
        self.sealer = sealer
        group = try EventLoopGroup(threads: 1)
    }

    var linkState: RtmLinkState { state }

    // MARK: Login and logout

    func login(token: String?) async throws(RtmErrorInfo) {
        try checkAlive("login")
        guard state == .idle || state == .failed else {
            throw RtmErrorInfo(.duplicateOperation, operation: "login", reason: "already logged in or logging in")
        }
        self.token = token ?? ""
        ticket = nil
        transition(to: .connecting, operation: .login, reason: .login)
        let deadline = settings.reconnectTimeout > 0 ? clock.now + .seconds(settings.reconnectTimeout) : nil
        var attempt = 0
        while true {
            do {
                _ = try await connectAndLogin()
                transition(to: .connected, operation: .login, reason: .loginSuccess)
                startHeartbeat()
                return
            } catch {
                if state != .connecting {
                    throw RtmErrorInfo(.loginCanceled, operation: "login", reason: "login was interrupted")
                }
                if let fatal = LinkPolicy.fatalReason(forLoginError: error.errorCode) {
                    closeSocket()
                    transition(to: .failed, operation: .login, reason: fatal)
                    throw error
                }
                if let deadline, clock.now >= deadline {
                    transition(to: .failed, operation: .login, reason: .loginTimeout)
                    throw RtmErrorInfo(.loginTimeout, operation: "login", reason: "could not reach \(settings.servers[0].url) in time")
                }
            }
            try? await clock.sleep(for: LinkPolicy.backoff(attempt: attempt))
            attempt += 1
            if state != .connecting {
                throw RtmErrorInfo(.loginCanceled, operation: "login", reason: "login was interrupted")
            }
        }
    }

    func logout() async throws(RtmErrorInfo) {
        try checkAlive("logout")
        guard state != .idle else {
            throw RtmErrorInfo(.notLogin, operation: "logout", reason: "not logged in")
        }
        let wasConnected = state == .connected
        reconnectTask?.cancel()
        reconnectTask = nil
        if wasConnected {
            _ = try? await request(.session(.logout))
        }
        closeSocket()
        subscriptions.removeAll()
        ticket = nil
        transition(to: .idle, operation: .logout, reason: .logout)
    }

    func renewToken(_ token: String) async throws(RtmErrorInfo) {
        try checkAlive("renewToken")
        self.token = token
        _ = try await request(.session(.renewToken(token: token)))
    }

    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        reconnectTask?.cancel()
        if state == .connected, let socket {
            socket.send(OutboundFrame.binary(ClientFrame(id: 0, .session(.logout)).encode()))
        }
        // A login still trying to connect sees the state leave `.connecting` and gives up.
        state = .idle
        closeSocket()
        for socket in silentlyLost { socket.close(code: .normalClosure, reason: "") }
        silentlyLost.removeAll()
        // Joining the loop thread blocks: do it off Swift's cooperative pool.
        let group = group
        Thread.detachNewThread { group.shutdown() }
        dispatcher.finish()
    }

    // MARK: Channels and messages

    func subscribe(_ channel: String, features: RtmSubscribeChannelFeature) async throws(RtmErrorInfo) {
        _ = try await request(.channel(.subscribe(channel: channel, features: features)))
        subscriptions[channel] = features
    }

    func unsubscribe(_ channel: String) async throws(RtmErrorInfo) {
        _ = try await request(.channel(.unsubscribe(channel: channel)))
        subscriptions[channel] = nil
    }

    func publish(
        channel: String, payload: MessagePayload, channelType: RtmChannelType, customType: String
    ) async throws(RtmErrorInfo) {
        _ = try await request(
            .channel(.publish(channelType: channelType, channel: channel, message: payload, customType: customType)))
    }

    // MARK: Requests

    /// Sends a request on the live connection and waits for its answer.
    private func request(_ operation: ClientOperation) async throws(RtmErrorInfo) -> Answer {
        let name = operation.name
        try checkAlive(name)
        switch state {
        case .connected: break
        case .idle, .failed:
            throw RtmErrorInfo(.notLogin, operation: name, reason: "log in first")
        case .connecting, .disconnected, .suspended:
            throw RtmErrorInfo(.notConnected, operation: name, reason: "not connected to the server right now")
        }
        return try await send(operation)
    }

    /// Sends a request on the current socket, whatever the link state, and waits for its answer.
    private func send(_ request: ClientOperation) async throws(RtmErrorInfo) -> Answer {
        let operation = request.name
        guard let socket else {
            throw RtmErrorInfo(.notConnected, operation: operation, reason: "not connected to the server right now")
        }
        nextRequestId &+= 1
        let id = nextRequestId
        let frame = ClientFrame(id: id, request)
        let timeout = requestTimeout
        let clock = clock
        let timer = Task { [weak self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            let timedOut = RtmError(Self.timeoutCode(for: operation), operation: operation, reason: "no answer from the server in time")
            await self?.answer(id, with: .error(id: id, timedOut))
        }
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<ServerFrame, Never>) in
            pending[id] = continuation
            if !socket.send(OutboundFrame.binary(frame.encode())) {
                let closed = RtmError(.notConnected, operation: operation, reason: "the connection is closed")
                pending.removeValue(forKey: id)?.resume(returning: .error(id: id, closed))
            }
        }
        timer.cancel()
        switch answer {
        case .answer(_, let result): return result
        case .error(_, let error): throw RtmErrorInfo(RtmError(error.code, operation: operation, reason: error.reason))
        case .push, .closing:
            throw RtmErrorInfo(.invalidParameter, operation: operation, reason: "unexpected answer")
        }
    }

    /// The reference's timeout code for each operation.
    static func timeoutCode(for operation: String) -> RtmErrorCode {
        switch operation {
        case "login": .loginTimeout
        case "subscribe": .channelSubscribeTimeout
        case "publish": .channelPublishMessageTimeout
        case "renewToken": .renewTokenTimeout
        default: .notConnected
        }
    }

    private func answer(_ id: UInt32, with frame: ServerFrame) {
        pending.removeValue(forKey: id)?.resume(returning: frame)
    }

    private func failPending(_ reason: String) {
        let waiting = pending
        pending.removeAll()
        for (id, continuation) in waiting {
            continuation.resume(returning: .error(id: id, RtmError(.notConnected, operation: "", reason: reason)))
        }
    }

    // MARK: Connections

    /// Opens a socket to the server and logs in on it (resuming when a ticket is held).
    private func connectAndLogin() async throws(RtmErrorInfo) -> LoginAccepted {
        closeSocket()
        generation += 1
        let current = generation
        let inbox = SocketInbox()
        let address = settings.servers[(current - 1) % settings.servers.count]
        let connection: WebSocketConnection
        do {
            connection = try await WebSocketClient.connect(
                to: address.url, subprotocols: [Wire.subprotocol], timeout: connectTimeout, tls: settings.tls,
                group: group, handler: inbox)
        } catch {
            throw LinkPolicy.connectError(error, url: address.url)
        }
        guard current == generation, !destroyed else {
            connection.close(code: .normalClosure, reason: "superseded")
            throw RtmErrorInfo(.loginCanceled, operation: "login", reason: "login was interrupted")
        }
        socket = connection
        Task { [weak self] in
            for await item in inbox.stream {
                await self?.received(item, generation: current)
            }
        }
        let settings = settings
        let token = token
        var ticket = ticket
        ticket?.received = receivedPushes
        let answer = try await send(
            .session(
                .login(
                    Login(
                        appId: settings.appId, userId: settings.userId, token: token,
                        heartbeatInterval: settings.heartbeatInterval, presenceTimeout: settings.presenceTimeout,
                        resume: ticket))))
        guard case .session(.login(let grant)) = answer else {
            throw RtmErrorInfo(.loginRejected, operation: "login", reason: "unexpected answer to login")
        }
        self.ticket = grant.ticket
        return grant
    }

    private func closeSocket() {
        heartbeatTask?.cancel()
        heartbeatTask = nil
        generation += 1
        socket?.close(code: .normalClosure, reason: "")
        socket = nil
        failPending("the connection closed")
    }

    private func received(_ item: SocketInbox.Item, generation current: Int) {
        guard current == generation else { return }
        switch item {
        case .frame(let frame):
            // Counted here, in arrival order: a new session starts from zero before its first push.
            if case .answer(_, .session(.login(let grant))) = frame, !grant.resumed { receivedPushes = 0 }
            if let id = frame.requestId {
                answer(id, with: frame)
                return
            }
            if case .push = frame { receivedPushes += 1 }
            switch frame {
            case .push(.message(let delivery)):
                guard let delivery = opened(delivery) else { return }
                dispatcher.emit(.message(RtmMessageEvent(delivery)))
            case .push(.session(.tokenPrivilegeWillExpire)):
                dispatcher.emit(.tokenPrivilegeWillExpire(channel: nil))
            case .closing(let reason, _):
                switch LinkPolicy.decision(forClosing: reason) {
                case .reconnect: linkLost(operation: .serverTimeout, reason: .keepAliveTimeout)
                case .ignore: break
                case .fail(let failure): serverEnded(failure)
                }
            case .push(.lock), .answer, .error:
                break
            }
        case .undecodable:
            break
        case .closed:
            if state == .connected {
                linkLost(operation: .networkChange, reason: .connectionError)
            } else {
                // Closed while logging in or reconnecting: fail what waits on it now, not at its timeout.
                closeSocket()
            }
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
            return nil
        }
    }

    /// The server ended the session for good.
    private func serverEnded(_ reason: RtmLinkStateChangeReason) {
        closeSocket()
        reconnectTask?.cancel()
        reconnectTask = nil
        ticket = nil
        transition(to: .failed, operation: .serverReject, reason: reason)
    }

    /// Sockets dropped by `loseConnectionSilently`, still open; closed on `destroy`.
    private var silentlyLost: [WebSocketConnection] = []

    /// Behaves as if the network swallowed the connection without a word: what still arrives on it
    /// is ignored and the client reconnects, while the server believes the old connection alive
    /// (for tests of resume over half-open connections).
    func loseConnectionSilently() {
        guard state == .connected, let socket else { return }
        silentlyLost.append(socket)
        self.socket = nil
        heartbeatTask?.cancel()
        heartbeatTask = nil
        generation += 1
        failPending("the connection was lost")
        transition(
            to: .disconnected, operation: .heartbeatTimeout, reason: .keepAliveTimeout,
            affectedChannels: subscriptions.keys.sorted())
        reconnectTask = Task { [weak self] in await self?.reconnect() }
    }

    // MARK: Heartbeats and reconnection

    private func startHeartbeat() {
        heartbeatTask?.cancel()
        let interval = Duration.seconds(settings.heartbeatInterval)
        let current = generation
        let clock = clock
        heartbeatTask = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self, await self.heartbeat(generation: current) else { return }
            }
        }
    }

    /// Sends one heartbeat; returns false when the link is gone.
    private func heartbeat(generation current: Int) async -> Bool {
        guard current == generation, state == .connected, socket != nil else { return false }
        do {
            _ = try await send(.session(.heartbeat))
            return true
        } catch {
            guard current == generation else { return false }
            linkLost(operation: .heartbeatTimeout, reason: .keepAliveTimeout)
            return false
        }
    }

    /// The connection is gone without the server ending the session: reconnect and resume.
    private func linkLost(operation: RtmLinkOperation, reason: RtmLinkStateChangeReason) {
        guard state == .connected, !destroyed else { return }
        closeSocket()
        transition(
            to: .disconnected, operation: operation, reason: reason, affectedChannels: subscriptions.keys.sorted())
        reconnectTask = Task { [weak self] in await self?.reconnect() }
    }

    private func reconnect() async {
        let deadline = settings.reconnectTimeout > 0 ? clock.now + .seconds(settings.reconnectTimeout) : nil
        var attempt = 0
        while !Task.isCancelled, state == .disconnected {
            // Pause before every attempt, the first included, so a flapping link is not hammered.
            try? await clock.sleep(for: LinkPolicy.backoff(attempt: attempt))
            attempt += 1
            guard !Task.isCancelled, state == .disconnected else { return }
            if let deadline, clock.now >= deadline {
                closeSocket()
                transition(to: .failed, operation: .autoReconnect, reason: .reconnectTimeout)
                return
            }
            do {
                let grant = try await connectAndLogin()
                guard state == .disconnected else { return }
                var unrestored = grant.loss.channels.map(\.name)
                if !grant.resumed {
                    for (channel, features) in subscriptions.sorted(by: { $0.key < $1.key }) {
                        do {
                            _ = try await send(.channel(.subscribe(channel: channel, features: features)))
                        } catch {
                            unrestored.append(channel)
                        }
                    }
                }
                transition(
                    to: .connected, operation: .reconnected, reason: .reconnectSuccess,
                    affectedChannels: subscriptions.keys.sorted(), unrestoredChannels: unrestored,
                    isResumed: grant.resumed)
                startHeartbeat()
                return
            } catch {
                guard state == .disconnected else { return }
                if let fatal = LinkPolicy.fatalReason(forLoginError: error.errorCode) {
                    closeSocket()
                    transition(to: .failed, operation: .autoReconnect, reason: fatal)
                    return
                }
            }
        }
    }

    // MARK: State

    private func transition(
        to next: RtmLinkState, operation: RtmLinkOperation, reason: RtmLinkStateChangeReason,
        affectedChannels: [String] = [], unrestoredChannels: [String] = [], isResumed: Bool = false
    ) {
        let previous = state
        state = next
        dispatcher.emit(
            .linkState(
                RtmLinkStateEvent(
                    currentState: next, previousState: previous, serviceType: .message, operation: operation,
                    reasonCode: reason, affectedChannels: affectedChannels, unrestoredChannels: unrestoredChannels,
                    isResumed: isResumed, timestamp: clock.wallMilliseconds)))
    }

    private func checkAlive(_ operation: String) throws(RtmErrorInfo) {
        if destroyed {
            throw RtmErrorInfo(.notInitialized, operation: operation, reason: "the client was destroyed")
        }
    }
}
