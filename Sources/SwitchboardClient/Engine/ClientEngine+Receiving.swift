import SwitchboardCore
import SwitchboardWire

/// What arrives on the connection: answers, pushes, the server's closing word, the close.
extension ClientEngine {
    func received(_ item: SocketInbox.Item, generation current: Int) {
        guard current == generation else { return }
        switch item {
        case .frame(let frame):
            receive(frame)
        case .undecodable(let error):
            log?.write(.warn, "undecodable frame from the server: \(error)")
        case .closed:
            if machine.state == .connected {
                apply(machine.handle(.connectionLost(.networkChange, .connectionError, now: clock.now)))
            } else {
                // Closed while logging in: the attempt failed (its waiters are now stale).
                closeConnection()
                attemptFailed(RtmErrorInfo(.notConnected, operation: OperationName.Session.login, reason: "the connection closed"), generation: generation)
            }
        }
    }

    private func receive(_ frame: ServerFrame) {
        switch frame {
        case .answer(let id, let answer):
            // Taken in arrival order: a new session starts counting before its first push.
            if case .session(.login(let accepted)) = answer { session.accept(accepted) }
            guard let (_, waiter) = pending.take(id) else { return }
            resolve(waiter, .success(answer))
        case .error(let id, let error):
            log?.write(.warn, "\(error)")
            guard let (operation, waiter) = pending.take(id) else { return }
            resolve(waiter, .failure(RtmErrorInfo(RtmError(error.code, operation: operation, reason: error.reason))))
        case .push(let push):
            session.countPush()
            if let reply = pushes.route(push) { send(reply, .call({ _ in })) }
        case .closing(let reason, _):
            switch LinkMachine.meaning(ofClosing: reason) {
            case .reconnect: apply(machine.handle(.connectionLost(.serverTimeout, .keepAliveTimeout, now: clock.now)))
            case .ignore: break
            case .fail(let failure): apply(machine.handle(.rejected(failure)))
            }
        }
    }
}
