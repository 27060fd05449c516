import SwitchboardCore
import SwitchboardWire

/// Requests on the connection: sending, answers, and the one deadline timer.
extension ClientEngine {
    /// Sends a request on the current connection, whatever the link state; false when there is no
    /// open connection (the waiter is not resolved then).
    @discardableResult
    func send(_ operation: ClientOperation, _ waiter: Waiter, trace: String? = nil) -> Bool {
        guard let socket = connection?.socket else { return false }
        let id = pending.add(operation, deadline: clock.now + requestTimeout, waiter: waiter)
        guard socket.send(ClientFrame(id: id, operation, trace: trace).encode()) else {
            _ = pending.take(id)
            return false
        }
        armDeadlineTimer()
        return true
    }

    /// Sends a request while the session is being restored and waits for its answer. Requests
    /// leave paced within the server's call budgets (`CallPacer`, which notes when each answer
    /// came); one the server still refuses as
    /// too frequent (a server configured with smaller budgets) is sent again after a pause, up to
    /// `restoreAttempts` times in all.
    func sendWhileRestoring(_ operation: ClientOperation, generation restoring: Int) async -> Result<Answer, RtmErrorInfo> {
        var attempt = 1
        while true {
            let at = restorePacer.earliest(operation.rateBudget, now: clock.now)
            if at > clock.now { try? await clock.sleep(until: at) }
            guard restoring == generation else {
                return .failure(RtmErrorInfo(.notConnected, operation: operation.name, reason: "the connection closed"))
            }
            let answer = OneShot<Result<Answer, RtmErrorInfo>>()
            if !send(operation, .call({ answer.fulfil($0) })) {
                return .failure(RtmErrorInfo(.notConnected, operation: operation.name, reason: "the connection is closed"))
            }
            let outcome = await answer.value
            var refusedAsTooFrequent = false
            if case .failure(let error) = outcome { refusedAsTooFrequent = error.errorCode == .operationRateExceedLimitation }
            if !refusedAsTooFrequent { restorePacer.answered(operation.rateBudget, at: clock.now) }
            guard case .failure(let error) = outcome else { return outcome }
            guard refusedAsTooFrequent, attempt < Self.restoreAttempts else {
                // What did not come back is said here (a user-metadata subscription has no channel
                // to list among the link event's unrestored channels).
                log?.write(.warn, "restoring: \(operation.name) failed: \(error.errorCode) \(error.reason)")
                return outcome
            }
            log?.write(.warn, "restoring: \(operation.name) refused as too frequent (\(error.reason)); sending it again")
            try? await clock.sleep(for: CallPacer.window)
            attempt += 1
        }
    }

    /// How many times a restore sends a request the server refuses as too frequent.
    static var restoreAttempts: Int { 5 }

    func resolve(_ waiter: Waiter, _ result: Result<Answer, RtmErrorInfo>) {
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
            if case .success = result { session.token = token }
            resolve(result)
        }
    }

    private func loginAnswered(_ result: Result<Answer, RtmErrorInfo>) {
        switch result {
        case .success(.session(.login(let accepted))):
            if accepted.loss.historyLost {
                let channels = accepted.loss.channels.map(\.name).joined(separator: ", ")
                log?.write(.warn, "resumed on another server of the cluster: pushes sent while away were not kept (\(channels))")
            } else if accepted.loss.droppedPushes > 0 {
                let channels = accepted.loss.channels.map(\.name).joined(separator: ", ")
                log?.write(.warn, "resumed past the server's resume bound: \(accepted.loss.droppedPushes) pushes lost (\(channels))")
            }
            apply(machine.handle(.loggedIn(resumed: accepted.resumed, presenceTimeout: accepted.presenceTimeout, now: clock.now)))
            if accepted.resumed && accepted.loss.historyLost { restoreWhatDidNotMove() }
        case .success:
            let odd = RtmErrorInfo(.loginRejected, operation: OperationName.Session.login, reason: "unexpected answer to login")
            apply(machine.handle(.attemptFailed(odd, now: clock.now)))
        case .failure(let error):
            apply(machine.handle(.attemptFailed(error, now: clock.now)))
        }
    }

    /// Keeps one timer, set for the earliest deadline of a waiting request.
    func armDeadlineTimer() {
        guard let earliest = pending.earliestDeadline else {
            timers.deadline?.task.cancel()
            timers.deadline = nil
            return
        }
        if let timer = timers.deadline, timer.at <= earliest { return }
        timers.deadline?.task.cancel()
        let clock = clock
        let task = Task { [weak self] in
            do { try await clock.sleep(until: earliest) } catch { return }
            await self?.sweepDeadlines()
        }
        timers.deadline = (task, earliest)
    }

    private func sweepDeadlines() {
        timers.deadline = nil
        for (operation, code, waiter) in pending.takeExpired(now: clock.now) {
            resolve(waiter, .failure(RtmErrorInfo(code, operation: operation, reason: "no answer from the server in time")))
        }
        armDeadlineTimer()
    }
}
