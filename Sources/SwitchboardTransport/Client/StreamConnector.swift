import CLinux
import Glibc
import SwitchboardCryptography

/// Connects one client socket without blocking, within a timeout, starts TLS when asked and hands
/// the socket to a `StreamConnection`. Lives on the socket's loop.
final class StreamConnector: Selectable {
    private let fd: Int32
    private let address: SocketAddress
    private let loop: EventLoop
    private let tls: (context: TLSContext, host: String)?
    private let handler: any StreamConnectionHandler
    private var completion: ((Result<StreamConnection, StreamConnectionError>) -> Void)?
    private var watchingConnect = false
    private var timer: UInt64?

    init(
        fd: Int32, address: SocketAddress, loop: EventLoop, tls: (context: TLSContext, host: String)?,
        handler: any StreamConnectionHandler,
        completion: @escaping (Result<StreamConnection, StreamConnectionError>) -> Void
    ) {
        self.fd = fd
        self.address = address
        self.loop = loop
        self.tls = tls
        self.handler = handler
        self.completion = completion
    }

    func start(timeout: Duration) {
        timer = loop.schedule(after: timeout) { [self] in
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

    private func connected() {
        Socket.setNoDelay(fd)
        let tcp: TCPStream
        do {
            tcp = try TCPStream(fd: fd, loop: loop)
        } catch {
            // TCPStream closed the descriptor.
            finish()?(.failure(.connectFailed(error.code)))
            return
        }
        var stream: any ByteStream = tcp
        var secure: TLSStream?
        if let tls {
            do {
                let session = try TLSSession(context: tls.context, peerHost: tls.host)
                secure = TLSStream(inner: tcp, session: session)
                stream = secure!
            } catch {
                tcp.close()
                finish()?(.failure(.tlsFailed(error)))
                return
            }
        }
        let connection = StreamConnection(stream: stream, remoteAddress: address.description, handler: handler)
        let completion = finish()
        secure?.start()
        completion?(.success(connection))
    }

    /// Cancels the timer and takes the completion, so it runs exactly once.
    private func finish() -> ((Result<StreamConnection, StreamConnectionError>) -> Void)? {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        defer { completion = nil }
        return completion
    }

    private func fail(_ error: StreamConnectionError) {
        guard let completion = finish() else { return }
        if watchingConnect { loop.deregister(fd) }
        watchingConnect = false
        Glibc.close(fd)
        completion(.failure(error))
    }
}
