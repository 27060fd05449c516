import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// Receives the transport's connection callbacks and gives each connection a `ClientLink` with
/// its own request loop.
final class ConnectionHub: WebSocketHandler {
    private let links = Mutex<[UInt64: ClientLink]>([:])
    private let outbox: ServerOutbox
    private let bus: EventBus
    private let dispatcher: RequestDispatcher
    private let log: ServerLog
    private let loginDeadline: LoginDeadline

    init(
        outbox: ServerOutbox, bus: EventBus, dispatcher: RequestDispatcher, log: ServerLog,
        loginDeadline: LoginDeadline
    ) {
        self.outbox = outbox
        self.bus = bus
        self.dispatcher = dispatcher
        self.log = log
        self.loginDeadline = loginDeadline
    }

    func webSocketOpened(_ connection: WebSocketConnection) {
        let link = ClientLink(socket: connection, limits: dispatcher.limits)
        links.withLock { $0[connection.id] = link }
        outbox.register(link)
        log(.debug, "\(link.id) opened from \(connection.remoteAddress)")
        loginDeadline.start(for: link)
    }

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard let link = links.withLock({ $0[connection.id] }) else { return }
        let item: ClientLink.Inbound
        switch message {
        case .binary(let bytes):
            do {
                item = .frame(try ClientFrame.decode(bytes))
            } catch {
                item = .malformed(error)
            }
        case .text:
            connection.close(code: .unsupportedData, reason: "send binary MessagePack frames")
            return
        }
        if link.received(item) {
            let dispatcher = dispatcher
            Task { await dispatcher.serve(link) }
        }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        guard let link = links.withLock({ $0.removeValue(forKey: connection.id) }) else { return }
        // From now on pushes for its session are kept for a resume. `ConnectionDropped` follows
        // once the link's request loop has handled what was already queued (a login, say).
        _ = outbox.connectionClosed(link.id)
        link.cancelLoginDeadline()
        if link.closeInbox() {
            bus.publish(ConnectionDropped(connection: link.id, session: link.identity?.session))
        }
        log(.debug, "\(link.id) closed (\(code.map { String($0.rawValue) } ?? "no code") \(reason))")
    }
}
