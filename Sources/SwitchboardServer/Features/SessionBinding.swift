import SwitchboardCore
import SwitchboardWire

/// The session feature's operations after login: logout, heartbeat, token renewal. Login itself
/// establishes who the caller is, so the dispatcher carries it out (`logIn`).
enum SessionBinding: FeatureBinding {
    static func answer(_ operation: SessionOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        switch operation {
        case .login:
            throw RtmError(.duplicateOperation, operation: OperationName.Session.login, reason: "this connection is already logged in")
        case .logout: _ = try await bus.request(Logout(caller: caller))
        case .heartbeat: _ = try await bus.request(Heartbeat(caller: caller))
        case .renewToken(let token): _ = try await bus.request(RenewToken(caller: caller, token: token))
        }
        return .done
    }
}

extension RequestDispatcher {
    /// Logs `link` in: asks the session module for a grant, then binds the session to the link,
    /// writing `loginOk`, then the pushes the client missed, in one step. Returns whether the
    /// session was granted and bound; counts the login or its failure's code.
    func logIn(_ login: Login, id: UInt32, on link: ClientLink<Connection>) async -> Bool {
        guard registry.caller(on: link) == nil else {
            metrics.loginFailed(.duplicateOperation)
            link.reply(.error(id: id, RtmError(.duplicateOperation, operation: OperationName.Session.login, reason: "this connection is already logged in")))
            return false
        }
        let grant: LoginGranted
        do {
            grant = try await bus.request(login)
        } catch {
            metrics.loginFailed(error.code)
            link.reply(.error(id: id, error))
            return false
        }
        do {
            let stale = try registry.bind(grant, to: link, received: login.resume?.received ?? 0) { loss in
                .answer(id: id, .session(.login(LoginAccepted(grant, loss: grant.takeOverLoss.map { moved in
                    ResumeLoss(droppedPushes: loss.droppedPushes, channels: moved.channels, historyLost: true)
                } ?? loss))))
            }
            link.markLoggedIn()
            metrics.logins.add()
            stale?.closeAfterTelling(reason: .relogin, detail: "the session resumed on a new connection")
            return true
        } catch .linkClosed {
            // The client is gone: its session waits for a resume like any that lost its connection
            // (unless it is still carried by another link, as after a failed resume attempt).
            if !registry.isBound(grant.session) { bus.publish(SessionDisconnected(session: grant.session)) }
            return false
        } catch {
            // `.sessionEnded`: another login replaced the session meanwhile.
            metrics.loginFailed(.loginCanceled)
            link.reply(
                .error(id: id, RtmError(.loginCanceled, operation: OperationName.Session.login, reason: "the session ended before the login completed")))
            return false
        }
    }
}
