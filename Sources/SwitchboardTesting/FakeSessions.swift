import Synchronization
import SwitchboardCore

/// An in-memory stand-in for the session module: answers `SessionsOfUser` from a table the test
/// fills, and `Login`/`Logout` by handing out sequential sessions with no checks.
public final class FakeSessions: Module {
    public let name = "fake-sessions"
    private let state = Mutex<(online: [UserID: [SessionID]], last: UInt64)>(([:], 0))

    /// Creates an empty table.
    public init() {}

    /// Marks `session` as belonging to `userId`.
    public func add(_ session: SessionID, for userId: UserID) {
        state.withLock { $0.online[userId, default: []].append(session) }
    }

    public func start(_ context: ModuleContext) async {
        context.bus.handle(SessionsOfUser.self) { [self] request in
            state.withLock { $0.online[request.userId] ?? [] }
        }
        context.bus.handle(Login.self) { [self] request in
            let session = state.withLock { state -> SessionID in
                state.last += 1
                let session = SessionID(state.last)
                state.online[request.userId, default: []].append(session)
                return session
            }
            _ = context.outbox.attach(session, to: request.connection, received: 0)
            return LoginGranted(
                session: session, ticket: ResumeTicket(session: session, secret: "fake"), resumed: false,
                heartbeatInterval: context.limits.clampedHeartbeatInterval(request.heartbeatInterval),
                presenceTimeout: context.limits.clampedPresenceTimeout(request.presenceTimeout), loss: .none)
        }
        context.bus.handle(Logout.self) { [self] request in
            state.withLock { state in
                for key in state.online.keys { state.online[key]?.removeAll { $0 == request.session } }
            }
            context.outbox.release(request.session)
            return Done()
        }
        context.bus.handle(Heartbeat.self) { _ in Done() }
    }
}
