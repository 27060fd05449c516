import CLinux
import Glibc
import SwitchboardCryptography

/// Connects one client socket without blocking, opens a tunnel through an HTTP proxy when there
/// is one, runs the opening handshake and hands the socket to a `WebSocketEngine`. Lives on the
/// socket's loop.
final class ClientConnector: Selectable, ByteStreamDelegate {
    struct Options: Sendable {
        var timeout: Duration
        var maxMessageBytes: Int
        var maxOutboundBytes: Int
        var closingTimeout: Duration
        /// TLS for `wss://`: the client context and the host name the certificate must match.
        var tls: (context: TLSContext, host: String)?
        /// The `CONNECT` request to send first when the socket goes to an HTTP proxy.
        var tunnelRequest: [UInt8]?
    }

    private let fd: Int32
    private let address: SocketAddress
    private let loop: EventLoop
    private let handshake: ClientHandshake
    private let options: Options
    private let handler: any WebSocketHandler
    private var continuation: CheckedContinuation<WebSocketConnection, any Error>?
    private var stream: (any ByteStream)?
    private var watchingConnect = false
    private var reader = HTTPHeadReader(maxBytes: 16 * 1024)
    private var timer: UInt64?
    /// The socket while the proxy has not yet answered `CONNECT`.
    private var tunnel: TCPStream?

    init(
        fd: Int32, address: SocketAddress, loop: EventLoop, handshake: ClientHandshake,
        options: Options, handler: any WebSocketHandler,
        continuation: CheckedContinuation<WebSocketConnection, any Error>
    ) {
        self.fd = fd
        self.address = address
        self.loop = loop
        self.handshake = handshake
        self.options = options
        self.handler = handler
        self.continuation = continuation
    }

    func start() {
        timer = loop.schedule(after: options.timeout) { [self] in
            timer = nil
            fail(.timedOut)
        }
        switch Socket.startConnect(fd, to: address, on: loop, handler: self) {
        case .connected: connected()
        case .watching: watchingConnect = true
        case .failed(let code): fail(.connectFailed(code))
        }
    }

    func handleEvents(_ events: UInt32) {
        guard watchingConnect else { return }
        watchingConnect = false
        let error = Socket.finishConnect(fd, on: loop)
        if error != 0 {
            fail(.connectFailed(error))
        } else {
            connected()
        }
    }

    func loopShuttingDown() { fail(.shutDown) }

    /// Abandons the attempt (the connecting task was cancelled); no effect once connected.
    func cancel() { fail(.cancelled) }

    private func connected() {
        Socket.setNoDelay(fd)
        let tcp: TCPStream
        do {
            tcp = try TCPStream(fd: fd, loop: loop)
        } catch {
            // TCPStream closed the descriptor.
            finish()?.resume(throwing: WebSocketClientError.connectFailed(error.code))
            return
        }
        if let request = options.tunnelRequest {
            tunnel = tcp
            stream = tcp
            tcp.delegate = self
            tcp.enqueue(.raw(request))
            tcp.flush()
            return
        }
        handshake(over: tcp)
    }

    /// Starts TLS (for `wss://`) and the opening handshake over the connected socket.
    private func handshake(over tcp: TCPStream) {
        guard let tls = options.tls else {
            start(on: tcp)
            return
        }
        let session: TLSSession
        do {
            session = try TLSSession(context: tls.context, peerHost: tls.host)
        } catch {
            stream = tcp
            fail(.tlsFailed(error))
            return
        }
        let secure = TLSStream(inner: tcp, session: session)
        start(on: secure)
        secure.start()
    }

    /// Queues the upgrade request on `stream`; over TLS it is sent once the handshake is done.
    private func start(on stream: any ByteStream) {
        self.stream = stream
        stream.delegate = self
        stream.enqueue(.raw(handshake.request))
        stream.flush()
    }

    func streamRead(_ bytes: UnsafeMutableRawBufferPointer) {
        let bytes = UnsafeRawBufferPointer(bytes)
        guard continuation != nil, let stream else { return }
        if let tunnel {
            tunnelAnswer(bytes, on: tunnel)
            return
        }
        guard let complete = readHead(bytes, orFail: .handshakeFailed("response head too large")) else { return }
        let subprotocol: String?
        do {
            subprotocol = try handshake.validate(response: complete.head)
        } catch {
            fail(error)
            return
        }
        let connection = WebSocketConnection(
            remoteAddress: address.description, subprotocol: subprotocol, requestPath: handshake.path,
            requestHeaders: HTTPHead(complete.head)?.headerDictionary(excluding: HTTPHead.handshakeHeaders) ?? [:],
            role: .client,
            eventLoop: loop, maxOutboundBytes: options.maxOutboundBytes)
        let engine = WebSocketEngine(
            stream: stream, connection: connection, handler: handler,
            maxMessageBytes: options.maxMessageBytes, closingTimeout: options.closingTimeout)
        let continuation = finish()
        engine.start(initialBytes: complete.rest)
        continuation?.resume(returning: connection)
    }

    /// Reads the proxy's answer to `CONNECT`; once it opens the tunnel, the handshake starts.
    private func tunnelAnswer(_ bytes: UnsafeRawBufferPointer, on tcp: TCPStream) {
        guard let answer = readHead(bytes, orFail: .proxyFailed("the proxy's answer is too large")) else { return }
        do {
            try HTTPProxy.checkConnectResponse(answer.head)
        } catch {
            fail(error)
            return
        }
        guard answer.rest.isEmpty else {
            fail(.proxyFailed("the proxy sent data before the tunnel was used"))
            return
        }
        tunnel = nil
        reader = HTTPHeadReader(maxBytes: reader.maxBytes)
        handshake(over: tcp)
    }

    /// Adds `bytes` to the answer being read; returns it (and what follows) once its head is
    /// complete. Fails with `tooLarge` when the head outgrows the reader.
    private func readHead(
        _ bytes: UnsafeRawBufferPointer, orFail tooLarge: WebSocketClientError
    ) -> (head: [UInt8], rest: [UInt8])? {
        do {
            return try reader.append(bytes)
        } catch {
            fail(tooLarge)
            return nil
        }
    }

    func streamWrote(byteCount: Int) {}

    func streamClosed() {
        if tunnel != nil {
            fail(.proxyFailed("the proxy closed the connection"))
        } else if let failure = (stream as? TLSStream)?.failure {
            fail(.tlsFailed(failure))
        } else {
            fail(.closedDuringHandshake)
        }
    }

    /// Cancels the timer and takes the continuation, so it is resumed exactly once.
    private func finish() -> CheckedContinuation<WebSocketConnection, any Error>? {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        defer { continuation = nil }
        return continuation
    }

    private func fail(_ error: WebSocketClientError) {
        guard let continuation = finish() else { return }
        if let stream {
            stream.delegate = nil
            stream.close()
        } else {
            if watchingConnect { loop.deregister(fd) }
            watchingConnect = false
            Glibc.close(fd)
        }
        continuation.resume(throwing: error)
    }
}
