import SwitchboardCore
import SwitchboardWire

/// What the link machine's commands do: connections, heartbeats, retries, reports, restores.
extension ClientEngine {
    func apply(_ commands: [LinkMachine.Command]) {
        for command in commands { apply(command) }
    }

    func apply(_ command: LinkMachine.Command) {
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
            session.forget()
            if machine.state == .idle || machine.state == .failed { for state in states { state.reset() } }
        }
    }

    /// Reports a change of the connection once for the message service, and once more for the
    /// stream service when stream channels ride on it (they share the connection).
    private func report(_ change: LinkMachine.Change) {
        log?.write(
            change.state == .failed ? .error : .info,
            "link \(change.previous) -> \(change.state) (\(change.operation), \(change.reason))")
        for service in [RtmServiceType.message, .stream] {
            let channels = states.filter { $0.serviceType == service }.flatMap(\.channels).sorted()
            let unrestored = change.unrestoredChannels.filter { unrestoredServices[$0] == service }
            if service == .stream && channels.isEmpty && unrestored.isEmpty { continue }
            pushes.dispatcher.emit(
                .linkState(
                    RtmLinkStateEvent(
                        currentState: change.state, previousState: change.previous, serviceType: service,
                        operation: change.operation, reasonCode: change.reason,
                        affectedChannels: change.affectsChannels ? channels : [], unrestoredChannels: unrestored,
                        isResumed: change.isResumed, timestamp: clock.wallMilliseconds)))
        }
    }

    /// Opens a connection to the next access point and logs in on it.
    private func connect() {
        closeConnection()
        let current = generation
        let address = settings.servers[attempts % settings.servers.count]
        attempts += 1
        let inbox = SocketInbox()
        let (timeout, transport) = (connectTimeout, transport)
        Task { [weak self] in
            do throws(TransportFailure) {
                let socket = try await transport.connect(
                    to: address, subprotocol: Wire.subprotocol, timeout: timeout, inbox: inbox)
                await self?.opened(socket, inbox: inbox, generation: current)
            } catch {
                await self?.attemptFailed(RtmErrorInfo.connectFailure(error, url: address.url), generation: current)
            }
        }
    }

    private func opened(_ socket: any ClientSocket, inbox: SocketInbox, generation current: Int) {
        guard current == generation, !destroyed else {
            socket.close()
            return
        }
        connection = Connection(socket: socket, generation: current)
        Task { [weak self] in
            for await item in inbox.stream { await self?.received(item, generation: current) }
        }
        let login = Login(
            appId: settings.appId, userId: settings.userId, token: session.token,
            heartbeatInterval: settings.heartbeatInterval, presenceTimeout: settings.presenceTimeout,
            resume: session.resume)
        if !send(.session(.login(login)), .login(generation: current)) {
            attemptFailed(RtmErrorInfo(.notConnected, operation: OperationName.Session.login, reason: "the connection closed"), generation: current)
        }
    }

    func attemptFailed(_ error: RtmErrorInfo, generation current: Int) {
        guard current == generation, !destroyed else { return }
        apply(machine.handle(.attemptFailed(error, now: clock.now)))
    }

    /// Closes the current connection and fails what waits on it. Callbacks of the old connection
    /// are ignored from now on.
    func closeConnection() {
        timers.heartbeats?.cancel()
        timers.heartbeats = nil
        generation += 1
        connection?.socket.close()
        connection = nil
        for (operation, code, waiter) in pending.takeAll() {
            resolve(waiter, .failure(RtmErrorInfo(code, operation: operation, reason: "the connection closed before the answer")))
        }
        armDeadlineTimer()
    }

    private func scheduleRetry(after pause: PortableDuration) {
        timers.retry?.cancel()
        let clock = clock
        timers.retry = Task { [weak self] in
            do { try await clock.sleep(for: pause) } catch { return }
            await self?.retryDue()
        }
    }

    private func retryDue() {
        guard !destroyed else { return }
        apply(machine.handle(.retryDue(now: clock.now)))
    }

    private func startHeartbeats() {
        timers.heartbeats?.cancel()
        let interval = PortableDuration.seconds(settings.heartbeatInterval)
        let current = generation
        let clock = clock
        timers.heartbeats = Task { [weak self] in
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

    /// After a resume on another node of a cluster (`historyLost`): restores what the server does
    /// not move with the session (stream channels, users' metadata subscriptions); the rest stands.
    func restoreWhatDidNotMove() {
        let states = states.filter { !$0.movesWithSession }
        guard !states.isEmpty else { return }
        let current = generation
        restorePacer = CallPacer()
        Task { [weak self] in
            guard let self else { return }
            for state in states {
                let lost = await state.restore { operation in await self.sendWhileRestoring(operation, generation: current) }
                if !lost.isEmpty { self.log?.write(.warn, "not joined again after the resume on another server: \(lost)") }
            }
        }
    }

    private func restoreSession() {
        let states = states
        let current = generation
        restorePacer = CallPacer()
        Task { [weak self] in
            guard let self else { return }
            var unrestored: [(String, RtmServiceType)] = []
            for state in states {
                let lost = await state.restore { operation in await self.sendWhileRestoring(operation, generation: current) }
                unrestored += lost.map { ($0, state.serviceType) }.filter { lost in !unrestored.contains { $0 == lost } }
            }
            await self.restored(unrestored, generation: current)
        }
    }

    /// A restore is done; one that belonged to a connection since closed changes nothing.
    private func restored(_ unrestored: [(String, RtmServiceType)], generation restoredOn: Int) {
        guard restoredOn == generation else { return }
        unrestoredServices = Dictionary(unrestored, uniquingKeysWith: { first, _ in first })
        apply(machine.handle(.restored(unrestored: unrestored.map(\.0))))
    }
}
