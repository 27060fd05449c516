/// Drives one open WebSocket on its loop: feeds inbound bytes to the parser, answers pings and
/// close frames, reports messages to the handler, and runs the closing handshake.
final class WebSocketEngine: ByteStreamDelegate {
    private enum State {
        case open
        /// Over the frame budget: input is ignored, and the close waits for the handler to
        /// finish answering the frames it was given (see `closeAfterAnswers`), at the latest
        /// `deadline`, the time since the loop's clock's origin (kept as a `Duration`, whose layout
        /// is known when this module is compiled: the state is read for every frame).
        case draining(quietSince: UInt64, deadline: Duration)
        case closing(receivedClose: Bool)
        case closed

        /// Open, or draining toward a close this side has not sent yet.
        var canStartClose: Bool {
            switch self {
            case .open, .draining: true
            case .closing, .closed: false
            }
        }
    }

    /// Monotonic time since `origin`, for the drain's deadline.
    private static func now() -> Duration {
        let origin = origin
        return ContinuousClock.now - origin
    }
    private static let origin = ContinuousClock.now

    /// How long the handler must have sent nothing before a connection over its frame budget is
    /// closed; the close never waits longer than `closingTimeout`.
    static let drainQuietTime: Duration = .milliseconds(100)

    let stream: any ByteStream
    let connection: WebSocketConnection
    private let handler: any WebSocketHandler
    /// Read and changed only by this engine's own methods on the loop thread. The one access that
    /// spans a call out, `parseRead` handing frames to the handler, cannot overlap another: the
    /// handler reaches the engine only through the connection, whose sends and closes are queued
    /// for a later pass. So it is not checked for exclusive access at run time (every frame paid
    /// for that check, about 2 % of a point-to-point message).
    @exclusivity(unchecked) private var parser: WebSocketParser
    /// `WebSocketConnection.handlerContext`. (Read as the handler gets each message; a plain
    /// read or write on the loop thread, never overlapping another, so not checked at run time.)
    @exclusivity(unchecked) var handlerContext: AnyObject?
    private var state = State.open
    private var closingTimer: UInt64?
    private let closingTimeout: Duration
    private var frameLimiter: FrameRateLimiter?
    private var framesCounted = 0
    /// The server that accepted the connection and the handshake it began as (nil on the client
    /// side): told of policy closes and of the close. Kept as references, not closures, so a
    /// connection costs no captured contexts on the heap.
    private let acceptedBy: (server: WebSocketServer, handshakeID: UInt64)?

    init(
        stream: any ByteStream, connection: WebSocketConnection, handler: any WebSocketHandler,
        maxMessageBytes: Int, closingTimeout: Duration, maxFramesPerSecond: Int? = nil,
        acceptedBy: (server: WebSocketServer, handshakeID: UInt64)? = nil
    ) {
        self.stream = stream
        self.connection = connection
        self.handler = handler
        self.parser = WebSocketParser(role: connection.role, maxMessageBytes: maxMessageBytes)
        self.closingTimeout = closingTimeout
        self.frameLimiter = maxFramesPerSecond.map { FrameRateLimiter(framesPerSecond: $0) }
        self.acceptedBy = acceptedBy
    }

    /// Takes over the stream, reports the connection open, then handles `initialBytes` (bytes
    /// that arrived with the handshake).
    func start(initialBytes: [UInt8]) {
        connection.engine = self
        stream.delegate = self
        handler.webSocketOpened(connection)
        if !initialBytes.isEmpty, case .open = state {
            var initialBytes = initialBytes
            initialBytes.withUnsafeMutableBytes { streamRead($0) }
        }
    }

    func streamRead(_ bytes: UnsafeMutableRawBufferPointer) {
        switch state {
        case .closed, .closing(receivedClose: true), .draining: return
        default: break
        }
        defer { handler.webSocketReadEnded(connection) }
        let now = frameLimiter == nil ? nil : Self.now()
        do {
            try parser.parseRead(bytes) { handOver($0, framesParsed: $1, now: now) }
            if let now { _ = admitFrames(at: now, framesParsed: parser.framesParsed) }
            // Reads are parsed in place: the parser's buffer only holds a frame that one read left
            // incomplete, and the read that follows it, so it is given back once they are parsed.
            parser.releaseBufferIfConsumed()
        } catch {
            failProtocol(error)
        }
    }

    /// Hands one parsed frame to the handler, or handles it; false when no further frame of the
    /// read is to be handled (over the frame budget, or closing). `framesParsed`: the parser's
    /// count after it.
    @inline(__always)
    private func handOver(_ frame: WebSocketParser.ReadFrame, framesParsed: Int, now: Duration?) -> Bool {
        if let now, !admitFrames(at: now, framesParsed: framesParsed) { return false }
        switch frame {
        case .event(let event):
            handle(event)
        case .binary(let message):
            if deliversMessages { handler.webSocket(connection, receivedBinary: message) }
        }
        if case .closing(receivedClose: true) = state { return false }
        if case .closed = state { return false }
        return true
    }

    /// Counts the frames parsed since the last call against the rate; once the peer is over it,
    /// stops handing frames to the handler, starts the close and returns false. The frames
    /// within the budget were handed over already, and their answers go out before the close.
    private func admitFrames(at now: Duration, framesParsed: Int) -> Bool {
        let count = framesParsed - framesCounted
        framesCounted = framesParsed
        guard case .open = state, frameLimiter?.admit(count, at: now) == false else { return true }
        acceptedBy?.server.refused(connection.remoteAddress, "too many frames")
        closeAfterAnswers(code: .policyViolation, reason: "too many frames")
        return false
    }

    /// Ignores further input and closes with `code` once the handler has sent nothing for
    /// `drainQuietTime` (at most `closingTimeout` from now), so answers it is still working on,
    /// possibly on other threads, go out ahead of the close frame. Sends stay open meanwhile.
    private func closeAfterAnswers(code: WebSocketCloseCode, reason: String) {
        state = .draining(quietSince: connection.framesSent, deadline: Self.now() + closingTimeout)
        scheduleDrainCheck(code: code, reason: reason)
    }

    private func scheduleDrainCheck(code: WebSocketCloseCode, reason: String) {
        closingTimer = stream.loop.schedule(after: Self.drainQuietTime) { [weak self] in
            guard let self, case .draining(let seen, let deadline) = state else { return }
            closingTimer = nil
            let sent = connection.framesSent
            if sent == seen || Self.now() >= deadline {
                connection.close(code: code, reason: reason)
            } else {
                state = .draining(quietSince: sent, deadline: deadline)
                scheduleDrainCheck(code: code, reason: reason)
            }
        }
    }

    /// Whether a data message received now goes to the handler.
    private var deliversMessages: Bool {
        guard case .open = state else { return false }
        return connection.isOpen
    }

    private func handle(_ event: WebSocketEvent) {
        let isOpen: Bool
        if case .open = state { isOpen = true } else { isOpen = false }
        switch event {
        case .message(let message):
            if deliversMessages { handler.webSocket(connection, received: message) }
        case .ping(let payload):
            if isOpen { sendControl(.pong(payload)) }
        case .pong:
            break
        case .close(let code, let reason):
            // Replies to earlier messages go out ahead of the closing handshake.
            if isOpen { connection.flushOnLoop() }
            if case .open = state {
                connection.markClosed()
                sendControl(.close(code: code))
                state = .closing(receivedClose: true)
                handler.webSocketClosed(connection, code: code ?? .noStatusReceived, reason: reason)
                finishClosing()
            } else {
                state = .closing(receivedClose: true)
                if connection.role == .server { stream.close() }
            }
        }
    }

    private func failProtocol(_ error: WebSocketProtocolError) {
        // Replies to the messages before the offending frame go out ahead of the close.
        if case .open = state { connection.flushOnLoop() }
        guard case .open = state else {
            stream.close()
            return
        }
        connection.markClosed()
        sendControl(.close(code: error.code, reason: error.reason))
        state = .closing(receivedClose: false)
        handler.webSocketClosed(connection, code: error.code, reason: error.reason)
        finishClosing()
    }

    /// Sends a close frame after what is queued and reports the close; for `close()` and stop.
    func closeLocally(code: WebSocketCloseCode, reason: String) {
        guard state.canStartClose else { return }
        sendControl(.close(code: code, reason: reason))
        state = .closing(receivedClose: false)
        handler.webSocketClosed(connection, code: code, reason: reason)
        finishClosing()
    }

    /// Closes a peer that does not read fast enough, with 1008 and a reason naming the bound.
    /// Queued frames not yet started on the wire are dropped; a write already partly done is
    /// finished (a frame, or a batch of small frames, whole), since a close frame inside it would
    /// corrupt the stream. The close frame follows,
    /// and the peer has `closingTimeout` to read it before the socket is closed.
    func closeSlowConsumer() {
        guard state.canStartClose else { return }
        let reason = "slow consumer: outbound queue over \(connection.maxOutboundBytes) bytes"
        if let closingTimer { stream.loop.cancelTimer(closingTimer) }
        closingTimer = nil
        connection.markClosed()
        connection.didDrop(byteCount: stream.dropUnstarted())
        acceptedBy?.server.refused(connection.remoteAddress, reason)
        closeLocally(code: .policyViolation, reason: reason)
    }

    /// Queues a control frame ahead of the connection's pending sends. Pongs count against the
    /// outbound bound too, so a peer that pings without reading is dropped like any slow consumer.
    private func sendControl(_ frame: OutboundFrame) {
        let frame = connection.role == .client ? frame.masked(with: MaskKeys.next()) : frame
        let buffered = connection.didQueue(byteCount: frame.count)
        if frame.opcode == .pong && buffered > connection.maxOutboundBytes {
            connection.didDrop(byteCount: frame.count)
            closeSlowConsumer()
            return
        }
        stream.enqueue(frame)
        stream.flush()
    }

    /// After our close frame: half-close once it is written, and give the peer a bounded time
    /// to finish before the socket is closed.
    private func finishClosing() {
        guard !stream.isClosed else { return }
        stream.shutdownOutputAfterFlush()
        guard !stream.isClosed, closingTimer == nil else { return }
        closingTimer = stream.loop.schedule(after: closingTimeout) { [weak self] in
            self?.closingTimer = nil
            self?.stream.close()
        }
    }

    func streamWrote(byteCount: Int) {
        connection.didWrite(byteCount: byteCount)
    }

    func streamClosed() {
        if state.canStartClose {
            connection.markClosed()
            handler.webSocketClosed(connection, code: nil, reason: "")
        }
        state = .closed
        if let closingTimer { stream.loop.cancelTimer(closingTimer) }
        closingTimer = nil
        connection.engine = nil
        if let acceptedBy { acceptedBy.server.forget(connection, handshakeID: acceptedBy.handshakeID) }
    }
}
