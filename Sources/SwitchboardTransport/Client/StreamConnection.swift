import Glibc
import Synchronization
import SwitchboardCryptography

/// A client TCP connection, optionally over TLS, for protocols other than WebSocket (Redis, HTTP):
/// bytes in, bytes out, and a close. Received bytes and the close go to a
/// `StreamConnectionHandler` on the connection's loop; writing and closing are safe from any
/// thread: bytes are appended to one buffer under a lock, and the loop writes it once per pass, so
/// many small writes (pipelined commands) leave in one system call.
public final class StreamConnection: Sendable, LoopFlushable, ByteStreamDelegate {
    private struct Outbound {
        var bytes: [UInt8] = []
        var isOpen = true
        var flushScheduled = false
        var closeRequested = false
    }

    /// The loop that owns the socket and calls the handler.
    public let loop: EventLoop
    /// The peer's address, "ip:port".
    public let remoteAddress: String
    private let handler: any StreamConnectionHandler
    private let outbound = Mutex(Outbound())
    private let stream: LoopConfined<(any ByteStream)?>

    init(stream: any ByteStream, remoteAddress: String, handler: any StreamConnectionHandler) {
        self.loop = stream.loop
        self.remoteAddress = remoteAddress
        self.handler = handler
        self.stream = LoopConfined(stream, loop: stream.loop)
        stream.delegate = self
    }

    /// Connects to `host`:`port` on `loop` within `timeout`; with `tls` (a client context), runs
    /// TLS and checks the server's certificate against `serverName` (the host by default). The
    /// connection's events go to `handler`. Host names are resolved on the calling thread.
    ///
    /// The connection is returned once TCP is connected; with TLS, bytes written before the TLS
    /// handshake ends wait for it, and a failed handshake closes the connection with
    /// `.tlsFailed`.
    public static func connect(
        host: String, port: Int, tls: TLSContext? = nil, serverName: String? = nil,
        timeout: Duration = .seconds(10), on loop: EventLoop, handler: any StreamConnectionHandler
    ) async throws(StreamConnectionError) -> StreamConnection {
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(host: host, port: port)
        } catch {
            throw .resolutionFailed(host)
        }
        if let tls, tls.role != .client {
            throw .tlsFailed(TLSError(.configuration, "a client needs a client TLS context"))
        }
        let security = tls.map { (context: $0, host: serverName ?? host) }
        let fd: Int32
        do {
            fd = try Socket.makeTCP(family: address.family)
        } catch {
            throw .connectFailed(error.code)
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<StreamConnection, StreamConnectionError>, Never>) in
            let submitted = loop.submit {
                let connector = StreamConnector(
                    fd: fd, address: address, loop: loop, tls: security, handler: handler,
                    completion: { continuation.resume(returning: $0) })
                connector.start(timeout: timeout)
            }
            if !submitted {
                Glibc.close(fd)
                continuation.resume(returning: .failure(.shutDown))
            }
        }
        return try result.get()
    }

    /// True until the connection closes or `close()` is called.
    public var isOpen: Bool { outbound.withLock { $0.isOpen } }

    /// Queues `bytes` behind what is already queued; false when the connection is closed.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        write { $0.append(contentsOf: bytes) }
    }

    /// Lets `fill` append bytes to the outbound buffer in place (an encoder writing straight into
    /// it); false, without calling `fill`, when the connection is closed.
    @discardableResult
    public func write(_ fill: (inout [UInt8]) -> Void) -> Bool {
        let (accepted, schedule) = outbound.withLock { state -> (Bool, Bool) in
            guard state.isOpen else { return (false, false) }
            fill(&state.bytes)
            guard !state.flushScheduled else { return (true, false) }
            state.flushScheduled = true
            return (true, true)
        }
        if schedule { loop.scheduleFlush(self) }
        return accepted
    }

    /// Closes the connection now, dropping bytes not yet written; the handler hears
    /// `connectionClosed` on the loop.
    public func close() {
        let schedule = outbound.withLock { state -> Bool in
            guard state.isOpen else { return false }
            state.isOpen = false
            state.closeRequested = true
            state.bytes = []
            guard !state.flushScheduled else { return false }
            state.flushScheduled = true
            return true
        }
        if schedule { loop.scheduleFlush(self) }
    }

    func flushOnLoop() {
        let (bytes, closing) = outbound.withLock { state -> ([UInt8], Bool) in
            state.flushScheduled = false
            defer { state.bytes = [] }
            return (state.bytes, state.closeRequested)
        }
        guard let stream = stream.value else { return }
        if closing {
            stream.close()
            return
        }
        guard !bytes.isEmpty else { return }
        stream.enqueue(.raw(bytes))
        stream.flush()
    }

    // MARK: The stream below (loop only)

    func streamRead(_ bytes: UnsafeMutableRawBufferPointer) {
        handler.connection(self, received: UnsafeRawBufferPointer(bytes))
    }

    func streamWrote(byteCount: Int) {}

    func streamClosed() {
        let failure = (stream.value as? TLSStream)?.failure
        let ioError = (stream.value as? TCPStream)?.ioError ?? (stream.value as? TLSStream)?.ioError
        stream.value = nil
        outbound.withLock { state in
            state.isOpen = false
            state.bytes = []
        }
        handler.connectionClosed(self, error: failure.map { .tlsFailed($0) } ?? ioError.map { .ioFailed($0) })
    }
}
