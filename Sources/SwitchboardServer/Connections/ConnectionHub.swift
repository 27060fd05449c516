import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// Receives the transport's connection callbacks: gives each connection a `ClientLink`, registers
/// it, and starts its request loop when frames arrive.
final class ConnectionHub: WebSocketHandler {
    private let registry: SessionRegistry
    private let dispatcher: RequestDispatcher
    private let log: ServerLog
    private let loginDeadline: LoginDeadline
    private let links = LinkTable()

    init(
        registry: SessionRegistry, dispatcher: RequestDispatcher, log: ServerLog,
        clock: any SwitchboardClock, loginTimeout: Duration?, refusals: RefusalLog
    ) {
        self.registry = registry
        self.dispatcher = dispatcher
        self.log = log
        loginDeadline = LoginDeadline(clock: clock, timeout: loginTimeout, refusals: refusals) { [links] in links[$0] }
    }

    /// Stops the login countdown (the server is stopping).
    func stop() { loginDeadline.stop() }

    func webSocketOpened(_ connection: WebSocketConnection) {
        let link = ClientLink(socket: connection, limiter: dispatcher.callLimiter)
        links.insert(link)
        connection.handlerContext = link
        registry.opened(link)
        log(.debug, "\(link.id) opened from \(connection.remoteAddress)")
        loginDeadline.start(for: link)
    }

    /// Bytes of requests one connection may have waiting to be carried out; past it the client
    /// sends faster than its requests are carried out (or one of them is slow), and it is closed
    /// with 1008 rather than queued for without bound. (16 MiB: a pipelining client at full speed
    /// stays well below it; with the default frame-rate cap a client reaches it only when its
    /// requests have waited for seconds.)
    static let maxWaitingBytes = 16 * 1024 * 1024

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        switch message {
        case .binary(let bytes):
            bytes.withUnsafeBytes { webSocket(connection, receivedBinary: $0) }
        case .text:
            guard connection.handlerContext is ClientLink else { return }
            connection.close(code: .unsupportedData, reason: "send binary MessagePack frames")
        }
    }

    func webSocket(_ connection: WebSocketConnection, receivedBinary bytes: UnsafeRawBufferPointer) {
        // The link kept with the connection: no lookup in the table both loops share.
        guard let link = connection.handlerContext as? ClientLink else { return }
        let item: ClientLink.Inbound
        do {
            // Decoded where the transport received it: the frame owns copies of what it keeps.
            let frame = try ClientFrame.decode(bytes.assumingMemoryBound(to: UInt8.self))
            if dispatcher.answerAtOnce(frame, on: link) { return }
            item = .frame(frame)
        } catch {
            item = .malformed(error)
        }
        // Only a frame that must wait counts against what may wait (one answered at once never
        // waits, and the transport bounds a frame's size).
        let size = bytes.count
        guard link.waitingBytes + size <= Self.maxWaitingBytes else {
            let reason = "more than \(Self.maxWaitingBytes) bytes of requests waiting"
            loginDeadline.refusals.refused(connection.remoteAddress, reason)
            connection.close(code: .policyViolation, reason: reason)
            return
        }
        if link.received(item, bytes: size) {
            let dispatcher = dispatcher
            Task { await dispatcher.serve(link) }
        }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        guard let link = links.remove(connection.id) else { return }
        // From now on pushes for its session are kept for a resume. The session learns it lost its
        // connection once the link's request loop has answered what was already queued.
        registry.closed(link)
        if link.closeInbox() { dispatcher.linkClosed(link) }
        log(.debug, "\(link.id) closed (\(code.map { String($0.rawValue) } ?? "no code") \(reason))")
    }
}

/// The links of open sockets by the transport's connection number, so a received frame finds its
/// link. (Which session a link carries is the registry's.)
private final class LinkTable: Sendable {
    private let links = Mutex<[UInt64: ClientLink]>([:])

    func insert(_ link: ClientLink) { links.withLock { $0[link.socket.id] = link } }

    subscript(id: UInt64) -> ClientLink? { links.withLock { $0[id] } }

    func remove(_ id: UInt64) -> ClientLink? { links.withLock { $0.removeValue(forKey: id) } }
}
