/// One connection of an `HTTPServer`, on its loop: reads requests with an `HTTPRequestParser`,
/// asks the responder for each in turn (the next is read only once the last is answered, so
/// pipelined requests are answered in order), and closes a connection whose request does not
/// arrive within the time limit or cannot be read.
final class HTTPServerConnection: ByteStreamDelegate {
    let id: UInt64
    let stream: any ByteStream
    let remoteAddress: String
    private let server: HTTPServer
    private var parser: HTTPRequestParser
    /// This connection as the loop-confined value the server holds, for the responder's task to
    /// come back to.
    private var confined: LoopConfined<HTTPServerConnection>?
    /// A request is with the responder.
    private var answering = false
    /// No more requests are read: an error response or a `Connection: close` answer is going out.
    private var closing = false
    private var timer: UInt64?

    init(id: UInt64, stream: any ByteStream, remoteAddress: String, server: HTTPServer) {
        self.id = id
        self.stream = stream
        self.remoteAddress = remoteAddress
        self.server = server
        parser = HTTPRequestParser(
            maxHeadBytes: server.configuration.maxHeadBytes, maxBodyBytes: server.configuration.maxBodyBytes)
    }

    /// Starts reading; `confined` is this connection as the server holds it.
    func start(confined: LoopConfined<HTTPServerConnection>) {
        self.confined = confined
        stream.delegate = self
        awaitRequest()
    }

    /// Closes now.
    func close() { stream.close() }

    func streamRead(_ bytes: UnsafeMutableRawBufferPointer) {
        guard !closing else { return }
        parser.append(UnsafeRawBufferPointer(bytes))
        readNext()
        // While a request is answered, what follows waits in the parser, up to about two more
        // requests: a client that sends further ahead is not waiting for its answers.
        let configuration = server.configuration
        if answering && parser.bufferedByteCount > 2 * (configuration.maxHeadBytes + configuration.maxBodyBytes) {
            server.refused(remoteAddress, "request refused: too many requests sent ahead of their answers")
            stream.close()
        }
    }

    /// Hands the next complete request to the responder, unless one is being answered.
    private func readNext() {
        guard !answering, !closing else { return }
        var next: HTTPRequest
        do {
            guard let parsed = try parser.nextRequest() else { return }
            next = parsed
        } catch {
            refuse(error)
            return
        }
        next.remoteAddress = remoteAddress
        let request = next
        cancelTimer()
        answering = true
        let (responder, loop, confined) = (server.responder, stream.loop, confined)
        Task {
            let response = await responder.respond(to: request)
            loop.execute { confined?.value.send(response, to: request) }
        }
    }

    private func send(_ response: HTTPResponse, to request: HTTPRequest) {
        answering = false
        guard !stream.isClosed else { return }
        let keepAlive = request.keepsAlive
        stream.enqueue(.raw(response.encoded(keepAlive: keepAlive, includingBody: request.method != "HEAD")))
        if keepAlive {
            stream.flush()
            awaitRequest()
            readNext()
        } else {
            finishAndClose()
        }
    }

    /// Answers a request that cannot be read with its status, then closes.
    private func refuse(_ failure: HTTPRequestFailure) {
        server.refused(remoteAddress, "request refused: \(failure.status) \(failure.reason)")
        let response = HTTPResponse.text(failure.status, failure.reason + "\n")
        stream.enqueue(.raw(response.encoded(keepAlive: false)))
        finishAndClose()
    }

    /// Writes what is queued, half-closes, and closes after the closing timeout at the latest.
    private func finishAndClose() {
        closing = true
        cancelTimer()
        stream.shutdownOutputAfterFlush()
        guard !stream.isClosed else { return }
        timer = stream.loop.schedule(after: server.configuration.closingTimeout) { [weak self] in
            self?.timer = nil
            self?.stream.close()
        }
    }

    /// Starts the countdown for the next request.
    private func awaitRequest() {
        cancelTimer()
        timer = stream.loop.schedule(after: server.configuration.requestTimeout) { [weak self] in
            guard let self else { return }
            timer = nil
            if parser.bufferedByteCount > 0 { server.refused(remoteAddress, "request timeout") }
            stream.close()
        }
    }

    private func cancelTimer() {
        if let timer { stream.loop.cancelTimer(timer) }
        timer = nil
    }

    func streamWrote(byteCount: Int) {}

    func streamClosed() {
        cancelTimer()
        confined = nil
        server.forget(connectionID: id)
    }
}
