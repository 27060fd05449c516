import SwitchboardCore
import SwitchboardWire

/// Turns one connection's frames into bus requests, in order, and answers each.
struct RequestDispatcher: Sendable {
    let bus: EventBus
    let clock: any SwitchboardClock
    let limits: Limits
    let log: ServerLog

    /// Answers the frames queued on `link`, in order, until none are left.
    func serve(_ link: ClientLink) async {
        while true {
            switch link.takeReceived() {
            case .frames(let items):
                for item in items { await answer(item, on: link) }
            case .drained(let connectionClosed):
                if connectionClosed {
                    bus.publish(ConnectionDropped(connection: link.id, session: link.identity?.session))
                }
                return
            }
        }
    }

    private func answer(_ item: ClientLink.Inbound, on link: ClientLink) async {
        // Any request is a sign of life, not only heartbeats; tell the session at most once a second.
        if let (session, _) = link.identity, link.isDueForSignOfLife(now: clock.now) {
            _ = try? await bus.request(Heartbeat(session: session))
        }
        switch item {
        case .malformed(let error):
            log(.debug, "\(link.id): undecodable frame: \(error)")
            link.reply(
                .error(
                    id: error.requestId ?? 0,
                    RtmError(error.errorCode, operation: error.messageType ?? "decode", reason: error.reason)))
        case .frame(let frame):
            await handle(frame, on: link)
        }
    }

    private func handle(_ frame: ClientFrame, on link: ClientLink) async {
        if case .login(let id, let appId, let userId, let token, let heartbeat, let presence, let resume) = frame {
            link.beginLogin()
            do {
                let grant = try await bus.request(
                    Login(
                        connection: link.id, appId: appId, userId: userId, token: token,
                        heartbeatInterval: heartbeat, presenceTimeout: presence, resume: resume))
                link.finishLogin(.loginOk(id: id, grant), session: grant.session, userId: userId)
            } catch {
                link.finishLogin(.error(id: id, error), session: nil, userId: userId)
            }
            return
        }
        guard let (session, userId) = link.identity else {
            link.reply(.error(id: frame.id, RtmError(.notLogin, operation: frame.type, reason: "log in first")))
            return
        }
        do {
            switch frame {
            case .login:
                return
            case .heartbeat:
                _ = try await bus.request(Heartbeat(session: session))
            case .logout:
                _ = try await bus.request(Logout(session: session))
                link.clearSession()
                link.reply(.ok(id: frame.id))
                link.socket.close(code: .normalClosure, reason: "logged out")
                return
            case .renewToken(_, let token):
                try link.takeRateBudget(.other, now: clock.now, operation: RenewToken.operation)
                _ = try await bus.request(RenewToken(session: session, token: token))
            case .subscribe(_, let channel, let features):
                try link.takeRateBudget(.other, now: clock.now, operation: Subscribe.operation)
                _ = try await bus.request(Subscribe(session: session, userId: userId, channelName: channel, features: features))
            case .unsubscribe(_, let channel):
                try link.takeRateBudget(.other, now: clock.now, operation: Unsubscribe.operation)
                _ = try await bus.request(Unsubscribe(session: session, userId: userId, channelName: channel))
            case .publish(_, let channelType, let channel, let message, let customType):
                try link.takeRateBudget(.publish, now: clock.now, operation: Publish.operation)
                _ = try await bus.request(
                    Publish(
                        session: session, userId: userId, channelType: channelType, channelName: channel,
                        payload: message, customType: customType))
            }
            link.reply(.ok(id: frame.id))
        } catch {
            link.reply(.error(id: frame.id, error))
        }
    }
}
