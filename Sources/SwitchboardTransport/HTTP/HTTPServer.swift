import Synchronization

/// A small HTTP/1.1 server on an `EventLoopGroup` (for operators' endpoints, not for traffic):
/// keep-alive, pipelined requests answered in order, bounded heads and bodies, a time limit on
/// each request, optional TLS. Every request goes to `responder`.
public final class HTTPServer: Sendable {
    private struct State {
        var stopping = false
        var nextConnectionID: UInt64 = 1
        var connections: [UInt64: LoopConfined<HTTPServerConnection>] = [:]
    }

    /// Address and bounds.
    public let configuration: Configuration
    /// The loops the server runs on.
    public let group: EventLoopGroup
    /// Answers every request.
    public let responder: any HTTPResponder
    private let state = Mutex(State())
    private let listening = ListeningSocket()

    /// A server that will listen per `configuration` once started.
    public init(configuration: Configuration, group: EventLoopGroup, responder: any HTTPResponder) {
        self.configuration = configuration
        self.group = group
        self.responder = responder
    }

    /// Binds and starts accepting; returns the bound port (useful with port 0).
    @discardableResult
    public func start() throws -> Int {
        try listening.start(host: configuration.host, port: configuration.port, group: group) { [self] in
            adopt(fd: $0, remoteAddress: $1, loop: $2)
        }
    }

    /// Stops accepting and closes every connection (a response being written is cut off).
    /// Returns without waiting.
    public func stop() {
        let connections = state.withLock { state in
            state.stopping = true
            defer { state.connections.removeAll() }
            return Array(state.connections.values)
        }
        listening.stop()
        for connection in connections { connection.loop.execute { connection.value.close() } }
    }

    /// The bound port once started.
    public var port: Int? { listening.port }

    /// Number of open connections.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: Called by the acceptor and connections on their loops

    private func adopt(fd: Int32, remoteAddress: String, loop: EventLoop) {
        let tcp: TCPStream
        do {
            tcp = try TCPStream(fd: fd, loop: loop)
        } catch {
            return
        }
        guard let stream = tcp.secured(with: configuration.tls) else { return }
        var overCap = false
        let connection = state.withLock { state -> LoopConfined<HTTPServerConnection>? in
            guard !state.stopping else { return nil }
            guard state.connections.count < configuration.maxConnections else {
                overCap = true
                return nil
            }
            let id = state.nextConnectionID
            state.nextConnectionID += 1
            let connection = LoopConfined(
                HTTPServerConnection(id: id, stream: stream, remoteAddress: remoteAddress, server: self), loop: loop)
            state.connections[id] = connection
            return connection
        }
        guard let connection else {
            stream.close()
            if overCap { refused(remoteAddress, "too many connections") }
            return
        }
        connection.value.start(confined: connection)
    }

    /// Forgets a closed connection.
    func forget(connectionID: UInt64) {
        _ = state.withLock { $0.connections.removeValue(forKey: connectionID) }
    }

    /// Reports a connection refused or closed by policy.
    func refused(_ remoteAddress: String, _ reason: String) {
        configuration.onRefusal?(remoteAddress, reason)
    }
}
