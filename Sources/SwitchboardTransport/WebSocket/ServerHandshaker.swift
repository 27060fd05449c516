/// Reads and answers the opening handshake of one accepted socket, then hands the socket to a
/// `WebSocketEngine`. Lives on the socket's loop.
final class ServerHandshaker: ByteStreamDelegate {
    let stream: any ByteStream
    let remoteAddress: String
    private let server: WebSocketServer
    private let handshakeID: UInt64
    private var reader: HTTPHeadReader
    private var finished = false
    private var timer: UInt64?

    init(stream: any ByteStream, remoteAddress: String, server: WebSocketServer, handshakeID: UInt64) {
        self.stream = stream
        self.remoteAddress = remoteAddress
        self.server = server
        self.handshakeID = handshakeID
        self.reader = HTTPHeadReader(maxBytes: server.configuration.maxHandshakeBytes)
    }

    func start() {
        stream.delegate = self
        timer = stream.loop.schedule(after: server.configuration.handshakeTimeout) { [weak self] in
            guard let self else { return }
            timer = nil
            server.refused(remoteAddress, "handshake timeout")
            stream.close()
        }
    }

    /// Drops the socket (server stopping).
    func abort() {
        stream.close()
    }

    func streamRead(_ bytes: UnsafeMutableRawBufferPointer) {
        guard !finished else { return }
        let head: (head: [UInt8], rest: [UInt8])
        do {
            guard let complete = try reader.append(UnsafeRawBufferPointer(bytes)) else { return }
            head = complete
        } catch {
            refuse(ServerHandshake.Rejected(431, "request head too large"))
            return
        }
        let configuration = server.configuration
        let handshake = ServerHandshake(
            subprotocol: configuration.subprotocol, requireSubprotocol: configuration.requireSubprotocol,
            allowedOrigins: configuration.allowedOrigins)
        switch handshake.respond(to: head.head) {
        case .failure(let rejected):
            refuse(rejected)
        case .success(let accepted):
            accept(accepted, rest: head.rest)
        }
    }

    private func accept(_ accepted: ServerHandshake.Accepted, rest: [UInt8]) {
        let configuration = server.configuration
        let connection = WebSocketConnection(
            remoteAddress: remoteAddress, subprotocol: accepted.subprotocol,
            requestPath: accepted.path, requestHeaders: configuration.keepsRequestHeaders ? accepted.headers : [:],
            role: .server,
            eventLoop: stream.loop, maxOutboundBytes: configuration.maxOutboundBytes)
        guard server.promote(handshakeID: handshakeID, to: connection) else {
            refuse(ServerHandshake.Rejected(503, "server stopping"))
            return
        }
        finish()
        stream.enqueue(.raw(accepted.response))
        stream.flush()
        let server = self.server
        let engine = WebSocketEngine(
            stream: stream, connection: connection, handler: server.handler,
            maxMessageBytes: configuration.maxMessageBytes,
            closingTimeout: configuration.closingTimeout,
            maxFramesPerSecond: configuration.maxFramesPerSecond, acceptedBy: (server, handshakeID))
        engine.start(initialBytes: rest)
    }

    private func refuse(_ rejected: ServerHandshake.Rejected) {
        finish()
        server.forget(handshakeID: handshakeID)
        server.refused(remoteAddress, "handshake refused: \(rejected.status) \(rejected.reason)")
        stream.enqueue(.raw(rejected.response))
        stream.shutdownOutputAfterFlush()
        guard !stream.isClosed else { return }
        timer = stream.loop.schedule(after: server.configuration.closingTimeout) { [weak self] in
            self?.timer = nil
            self?.stream.close()
        }
    }

    private func finish() {
        finished = true
        if let timer { stream.loop.cancelTimer(timer) }
        timer = nil
    }

    func streamWrote(byteCount: Int) {}

    func streamClosed() {
        if let timer { stream.loop.cancelTimer(timer) }
        timer = nil
        server.forget(handshakeID: handshakeID)
    }
}
