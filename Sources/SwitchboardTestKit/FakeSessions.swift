import Synchronization
import SwitchboardCore

/// An in-memory stand-in for the session module: answers `Login`/`Logout`/`Heartbeat` by handing
/// out sequential sessions with no checks, and announces sessions the test adds. It publishes
/// `SessionOpened` and `SessionClosed` as the session module does.
public final class FakeSessions: Module {
    public let name = "fake-sessions"
    private let state = Mutex<(online: [UserKey: [SessionID]], last: UInt64)>(([:], 0))
    private let bus = Mutex<EventBus?>(nil)

    /// Creates an empty table.
    public init() {}

    /// Marks `session` as belonging to `user`, and announces it as opened once the module has
    /// started (so add sessions after starting the modules that keep a view of them).
    public func add(_ session: SessionID, for user: UserKey) {
        state.withLock { $0.online[user, default: []].append(session) }
        bus.withLock { $0 }?.publish(SessionOpened(caller: Caller(app: user.app, userId: user.userId, session: session)))
    }

    public func start(_ context: ModuleContext) async {
        bus.withLock { $0 = context.bus }
        context.bus.handle(Login.self) { [self] request in
            let user = UserKey(request.appId, request.userId)
            let session = state.withLock { state -> SessionID in
                state.last += 1
                let session = SessionID(state.last)
                state.online[user, default: []].append(session)
                return session
            }
            context.outbox.open(session)
            context.bus.publish(SessionOpened(caller: Caller(app: user.app, userId: user.userId, session: session)))
            return LoginGranted(
                caller: Caller(app: user.app, userId: user.userId, session: session),
                ticket: ResumeTicket(session: session, secret: "fake"), resumed: false,
                heartbeatInterval: context.limits.sessions.clampedHeartbeatInterval(request.heartbeatInterval),
                presenceTimeout: context.limits.sessions.clampedPresenceTimeout(request.presenceTimeout))
        }
        context.bus.handle(Logout.self) { [self] request in
            state.withLock { state in
                for key in state.online.keys { state.online[key]?.removeAll { $0 == request.caller.session } }
            }
            context.outbox.release(request.caller.session)
            context.bus.publish(SessionClosed(caller: request.caller, reason: .logout))
            return Done()
        }
        context.bus.handle(Heartbeat.self) { _ in Done() }
    }
}
