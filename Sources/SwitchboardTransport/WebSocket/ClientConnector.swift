import CLinux
import Glibc
import SwitchboardCrypto

/// Connects one client socket without blocking, runs the opening handshake and hands the
/// socket to a `WebSocketEngine`. Lives on the socket's loop.
final class ClientConnector: Selectable, ByteStreamDelegate {
    struct Options: Sendable {
        var timeout: Duration
        var maxMessageBytes: Int
        var maxOutboundBytes: Int
        var closingTimeout: Duration
        /// TLS for `wss://`: the client context and the host name the certificate must match.
        var tls: (context: TLSContext, host: String)?
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
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if result == 0 {
            connected()
        } else if errno == EINPROGRESS || errno == EINTR {
            do {
                try loop.register(fd, events: EPOLLOUT.rawValue, handler: self)
                watchingConnect = true
            } catch {
                fail(.connectFailed(error.code))
            }
        } else {
            fail(.connectFailed(errno))
        }
    }

    func handleEvents(_ events: UInt32) {
        guard watchingConnect else { return }
        watchingConnect = false
        loop.deregister(fd)
        let error = Socket.pendingError(fd)
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

    func streamRead(_ bytes: UnsafeRawBufferPointer) {
        guard continuation != nil, let stream else { return }
        let complete: (head: [UInt8], rest: [UInt8])
        do {
            guard let head = try reader.append(bytes) else { return }
            complete = head
        } catch {
            fail(.handshakeFailed("response head too large"))
            return
        }
        let subprotocol: String?
        do {
            subprotocol = try handshake.validate(response: complete.head)
        } catch {
            fail(error)
            return
        }
        let connection = WebSocketConnection(
            remoteAddress: address.description, subprotocol: subprotocol, requestPath: handshake.path,
            requestHeaders: HTTPHead(complete.head)?.headerDictionary ?? [:], role: .client,
            eventLoop: loop, maxOutboundBytes: options.maxOutboundBytes)
        let engine = WebSocketEngine(
            stream: stream, connection: connection, handler: handler,
            maxMessageBytes: options.maxMessageBytes, closingTimeout: options.closingTimeout)
        let continuation = finish()
        engine.start(initialBytes: complete.rest)
        continuation?.resume(returning: connection)
    }

    func streamWrote(byteCount: Int) {}

    func streamClosed() {
        if let failure = (stream as? TLSStream)?.failure {
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
