import Synchronization
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

@testable import SwitchboardServer

/// The server's connection handling without sockets: the hub, its request dispatcher and the
/// session registry over `RecordingConnection`s, on a bus with the given modules (fakes by
/// default) and a manual clock. A test opens connections, hands the hub encoded frames as the
/// transport would, and reads what each connection was sent.
final class LinkHarness: Sendable {
    let bus: EventBus
    let clock: ManualClock
    let registry: SessionRegistry<RecordingConnection>
    let hub: ConnectionHub<RecordingConnection>
    let dispatcher: RequestDispatcher<RecordingConnection>
    /// Records events; call `recorder.record(E.self, on: bus)` for the types of interest.
    let recorder = EventRecorder()
    private let lastConnection = Atomic<UInt64>(0)

    /// Starts `modules` on a bus whose outbox is the registry; `loginTimeout` as the server's.
    init(
        limits: Limits = Limits(), loginTimeout: Duration? = nil,
        modules: [any Module] = [FakeSessions(), FakeMessageRouter()]
    ) async {
        bus = EventBus()
        clock = ManualClock()
        registry = SessionRegistry(limits: limits)
        let log = ServerLog(level: .none)
        let context = ModuleContext(bus: bus, clock: clock, limits: limits, outbox: RegistryOutbox(registry), log: log)
        for module in modules { await module.start(context.labeled(module.name)) }
        dispatcher = RequestDispatcher(bus: bus, registry: registry, clock: clock, limits: limits, log: log)
        hub = ConnectionHub(
            registry: registry, dispatcher: dispatcher, log: log, clock: clock, loginTimeout: loginTimeout,
            refusals: RefusalLog(log: log, clock: clock))
    }

    /// Opens a connection, as the transport does once a client's handshake completes.
    func connect() -> (connection: RecordingConnection, link: ClientLink<RecordingConnection>) {
        let connection = RecordingConnection(id: lastConnection.add(1, ordering: .relaxed).newValue)
        return (connection, hub.opened(connection))
    }

    /// Hands the hub `frame`, encoded, as a binary message received on `link`.
    func send(_ frame: ClientFrame, on link: ClientLink<RecordingConnection>) {
        send(bytes: frame.encode(), on: link)
    }

    /// Hands the hub `bytes` as a binary message received on `link`, read alone from its socket.
    func send(bytes: [UInt8], on link: ClientLink<RecordingConnection>) {
        bytes.withUnsafeBytes { hub.received($0, on: link) }
        dispatcher.readEnded(on: link)
    }

    /// Logs `userId` in on `link` with request `id`; the login's answer, once it came.
    func logIn(_ userId: String, id: UInt32 = 1, on link: ClientLink<RecordingConnection>) async -> ServerFrame? {
        send(ClientFrame(id: id, .session(.login(Login(appId: "app", userId: userId, token: "")))), on: link)
        return await link.socket.answer(to: id)
    }

    /// The transport reports that `connection` closed (the peer went away).
    func drop(_ connection: RecordingConnection) {
        hub.closed(connection.id, code: nil, reason: "connection lost")
    }

    /// Stops the login countdown and closes the bus.
    func stop() {
        hub.stop()
        bus.close()
    }
}

/// The registry of in-memory connections as the modules' outbox (the server's registry is one
/// itself, but only over sockets).
private struct RegistryOutbox: Outbox {
    let registry: SessionRegistry<RecordingConnection>

    init(_ registry: SessionRegistry<RecordingConnection>) { self.registry = registry }

    func open(_ session: SessionID) { registry.open(session) }
    func deliver(_ push: Push, to sessions: [SessionID]) { registry.deliver(push, to: sessions) }
    func deliver(_ push: consuming Push, to session: SessionID) { registry.deliver(push, to: session) }
    func deliver(_ message: consuming LentMessage, to session: SessionID) { registry.deliver(message, to: session) }
    func deliver(_ message: consuming LentMessage, to session: SessionID, memo: inout OutboxMemo) {
        registry.deliver(message, to: session, memo: &memo)
    }
    func deliver(_ message: LentMessage, to sessions: [SessionID]) { registry.deliver(message, to: sessions) }
    func deliver(_ push: Push, to sessions: [SessionID], priority: RtmMessagePriority) {
        registry.deliver(push, to: sessions, priority: priority)
    }
    func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String) {
        registry.disconnect(session, reason: reason, detail: detail)
    }
    func release(_ session: SessionID) { registry.release(session) }
}
