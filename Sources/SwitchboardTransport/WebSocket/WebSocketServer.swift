import CLinux
import Glibc
import Synchronization

/// An RFC 6455 WebSocket server on an `EventLoopGroup`: one acceptor, connections spread over
/// the loops round-robin, every connection's events delivered to `handler` on its loop.
public final class WebSocketServer: Sendable {
    private struct State {
        var stopping = false
        var nextHandshakeID: UInt64 = 1
        var handshakes: [UInt64: LoopConfined<ServerHandshaker>] = [:]
        var connections: [UInt64: WebSocketConnection] = [:]
        /// Sockets per peer address, keyed by handshake id for the life of the socket.
        var addresses = AddressLedger(cap: nil, exempt: [])
    }

    /// Address and limits.
    public let configuration: Configuration
    /// The loops the server runs on.
    public let group: EventLoopGroup
    /// Receives every connection's events.
    public let handler: any WebSocketHandler
    private let state = Mutex(State())
    private let listening = ListeningSocket()

    /// A server that will listen per `configuration` once started.
    public init(configuration: Configuration = Configuration(), group: EventLoopGroup, handler: any WebSocketHandler) {
        self.configuration = configuration
        self.group = group
        self.handler = handler
        state.withLock {
            $0.addresses = AddressLedger(
                cap: configuration.maxConnectionsPerAddress, exempt: configuration.connectionCapExemptAddresses)
        }
    }

    /// Binds and starts accepting; returns the bound port (useful with port 0). Connections
    /// that arrive before the acceptor runs wait in the listen backlog.
    @discardableResult
    public func start() throws -> Int {
        try listening.start(host: configuration.host, port: configuration.port, group: group) { [self] in
            adopt(fd: $0, remoteAddress: $1, loop: $2)
        }
    }

    /// Stops accepting and closes every connection with `code` (after the frames already
    /// queued to it); handshakes in progress are dropped. Returns without waiting.
    public func stop(code: WebSocketCloseCode = .goingAway) {
        let (handshakes, connections) = state.withLock { state in
            state.stopping = true
            defer { state.handshakes.removeAll() }
            return (Array(state.handshakes.values), Array(state.connections.values))
        }
        listening.stop()
        for handshake in handshakes { handshake.loop.execute { handshake.value.abort() } }
        for connection in connections { connection.close(code: code, reason: "server stopping") }
    }

    /// The bound port once started.
    public var port: Int? { listening.port }

    /// Number of open connections.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Number of sockets still in their opening handshake.
    public var handshakeCount: Int { state.withLock { $0.handshakes.count } }

    // MARK: Called by the acceptor and connections on their loops

    /// Starts the handshake for an accepted socket on the current loop.
    func adopt(fd: Int32, remoteAddress: String, loop: EventLoop) {
        let tcp: TCPStream
        do {
            tcp = try TCPStream(fd: fd, loop: loop)
        } catch {
            return
        }
        Socket.setNoDelay(fd)
        guard let stream = tcp.secured(with: configuration.tls) else { return }
        var overCap = false
        let handshaker = state.withLock { state -> LoopConfined<ServerHandshaker>? in
            guard !state.stopping else { return nil }
            let id = state.nextHandshakeID
            guard state.addresses.admit(id, address: AddressLedger.host(of: remoteAddress)) else {
                overCap = true
                return nil
            }
            state.nextHandshakeID += 1
            let handshaker = LoopConfined(
                ServerHandshaker(stream: stream, remoteAddress: remoteAddress, server: self, handshakeID: id),
                loop: loop)
            state.handshakes[id] = handshaker
            return handshaker
        }
        guard let handshaker else {
            stream.close()
            if overCap { refused(remoteAddress, "too many connections from this address") }
            return
        }
        handshaker.value.start()
    }

    /// Moves a handshake to the open connections; false when the server is stopping.
    func promote(handshakeID: UInt64, to connection: WebSocketConnection) -> Bool {
        state.withLock { state in
            state.handshakes[handshakeID] = nil
            guard !state.stopping else { return false }
            state.connections[connection.id] = connection
            return true
        }
    }

    /// Forgets a handshake that did not become a connection.
    func forget(handshakeID: UInt64) {
        state.withLock { state in
            state.handshakes[handshakeID] = nil
            state.addresses.release(handshakeID)
        }
    }

    /// Forgets a closed connection that began as handshake `handshakeID`.
    func forget(_ connection: WebSocketConnection, handshakeID: UInt64) {
        state.withLock { state in
            state.connections[connection.id] = nil
            state.addresses.release(handshakeID)
        }
    }

    /// Reports a socket refused or closed by policy.
    func refused(_ remoteAddress: String, _ reason: String) {
        configuration.onRefusal?(remoteAddress, reason)
    }
}
