import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// Receives the transport's connection callbacks: gives each connection a `ClientLink`, registers
/// it, and starts its request loop when frames arrive.
///
/// `Connection` is `WebSocketConnection` in the server, which hands the hub its sockets through
/// `WebSocketHandler`, and an in-memory double in tests, which call `opened`, `received` and
/// `closed` themselves (`LinkConnection` says why that costs nothing).
final class ConnectionHub<Connection: LinkConnection>: Sendable {
    private let registry: SessionRegistry<Connection>
    private let dispatcher: RequestDispatcher<Connection>
    private let log: ServerLog
    private let loginDeadline: LoginDeadline<Connection>
    private let links = LinkTable<Connection>()

    init(
        registry: SessionRegistry<Connection>, dispatcher: RequestDispatcher<Connection>, log: ServerLog,
        clock: any SwitchboardClock, loginTimeout: Duration?, refusals: RefusalLog
    ) {
        self.registry = registry
        self.dispatcher = dispatcher
        self.log = log
        loginDeadline = LoginDeadline(clock: clock, timeout: loginTimeout, refusals: refusals) { [links] in links[$0] }
    }

    /// Stops the login countdown (the server is stopping).
    func stop() { loginDeadline.stop() }

    /// A connection opened: returns its link, registered and counting down to its login deadline.
    func opened(_ connection: Connection) -> ClientLink<Connection> {
        let link = ClientLink(socket: connection, limiter: dispatcher.callLimiter)
        links.insert(link)
        registry.opened(link)
        log(.debug, "opened from \(connection.remoteAddress)", LogIDs(connection: String(link.id.rawValue)))
        loginDeadline.start(for: link)
        return link
    }

    /// Bytes of requests one connection may have waiting to be carried out; past it the client
    /// sends faster than its requests are carried out (or one of them is slow), and it is closed
    /// with 1008 rather than queued for without bound. (16 MiB: a pipelining client at full speed
    /// stays well below it; with the default frame-rate cap a client reaches it only when its
    /// requests have waited for seconds.)
    static var maxWaitingBytes: Int { 16 * 1024 * 1024 }

    /// A binary message arrived on `link`: answered at once when it can be, otherwise queued for
    /// the link's request loop (started if none runs).
    func received(_ bytes: UnsafeRawBufferPointer, on link: ClientLink<Connection>) {
        let item: InboundRequest
        let frameBytes = bytes.assumingMemoryBound(to: UInt8.self)
        do {
            let frame: ClientFrame
            var budgetTaken = false
            if let publish = ClientFrame.publishView(frameBytes) {
                // A publish as clients write it: answered from the received bytes when its module can.
                switch dispatcher.answerInPlace(publish, on: link) {
                case .answered, .started: return
                case .mustWait(let taken): budgetTaken = taken
                }
                frame = publish.frame
            } else {
                // Decoded where the transport received it: the frame owns copies of what it keeps.
                frame = try ClientFrame.decode(frameBytes)
            }
            switch dispatcher.answerAtOnce(frame, on: link, budgetTaken: budgetTaken) {
            case .answered, .started: return
            case .mustWait(let taken): item = .frame(frame, budgetTaken: taken)
            }
        } catch {
            item = .malformed(error)
        }
        // Only a frame that must wait counts against what may wait (one answered at once never
        // waits, and the transport bounds a frame's size).
        let size = bytes.count
        guard link.waitingBytes + size <= Self.maxWaitingBytes else {
            let reason = "more than \(Self.maxWaitingBytes) bytes of requests waiting"
            loginDeadline.refusals.refused(link.socket.remoteAddress, reason)
            link.socket.close(code: .policyViolation, reason: reason)
            return
        }
        if link.received(item, bytes: size) {
            let dispatcher = dispatcher
            Task { await dispatcher.serve(link) }
        }
    }

    /// The connection numbered `id` stopped being open.
    func closed(_ id: UInt64, code: WebSocketCloseCode?, reason: String) {
        guard let link = links.remove(id) else { return }
        // A close can come in the middle of a read (a protocol error after some frames): what that
        // read answered at once is counted now, as its end will find no link.
        dispatcher.readEnded(on: link)
        // From now on pushes for its session are kept for a resume. The session learns it lost its
        // connection once the link's request loop has answered what was already queued.
        registry.closed(link)
        if link.closeInbox() { dispatcher.linkClosed(link) }
        log(.debug, "closed (\(code.map { String($0.rawValue) } ?? "no code") \(reason))", LogIDs(connection: String(link.id.rawValue)))
    }
}

/// The server's hub takes its sockets from the transport. Constrained to them, so a received
/// frame reaches code specialised for `WebSocketConnection` (`LinkConnection`).
extension ConnectionHub: WebSocketHandler where Connection == WebSocketConnection {
    func webSocketOpened(_ connection: WebSocketConnection) {
        connection.handlerContext = opened(connection)
    }

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        switch message {
        case .binary(let bytes):
            bytes.withUnsafeBytes { webSocket(connection, receivedBinary: $0) }
        case .text:
            guard connection.handlerContext != nil else { return }
            connection.close(code: .unsupportedData, reason: "send binary MessagePack frames")
        }
    }

    func webSocket(_ connection: WebSocketConnection, receivedBinary bytes: UnsafeRawBufferPointer) {
        // The link kept with the connection: no lookup in the table both loops share. Only
        // `webSocketOpened` sets the context of this handler's connections, always to a
        // `SocketLink`, before any frame arrives: the cast is checked in debug builds only (a
        // checked cast to a generic class would look its metadata up on every frame).
        // (Lent, not retained: the connection keeps it for the length of this call.)
        guard let context = connection.unretainedHandlerContext else { return }
        context._withUnsafeGuaranteedRef { context in
            let link = unsafeDowncast(context, to: SocketLink.self)
            // Fan-outs this read delivers may be held for its end (`SessionRegistry.readEnded`).
            link.withRead { $0.enterScope() }
            received(bytes, on: link)
        }
    }

    func webSocketReadEnded(_ connection: WebSocketConnection) {
        registry.readEnded()
        guard let context = connection.handlerContext else { return }
        dispatcher.readEnded(on: unsafeDowncast(context, to: SocketLink.self))
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        closed(connection.id, code: code, reason: reason)
    }
}

/// The links of open sockets by the transport's connection number, so a received frame finds its
/// link. (Which session a link carries is the registry's.)
private final class LinkTable<Connection: LinkConnection>: Sendable {
    private let links = Mutex<[UInt64: ClientLink<Connection>]>([:])

    func insert(_ link: ClientLink<Connection>) { links.withLock { $0[link.socket.id] = link } }

    subscript(id: UInt64) -> ClientLink<Connection>? { links.withLock { $0[id] } }

    func remove(_ id: UInt64) -> ClientLink<Connection>? { links.withLock { $0.removeValue(forKey: id) } }
}
