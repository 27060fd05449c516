import Synchronization

/// One open WebSocket. Its metadata is immutable; sending and closing are safe from any thread:
/// frames are queued under a lock and the connection's event loop writes them in batches.
public final class WebSocketConnection: Sendable, LoopFlushable {
    private struct Outbound {
        var queue: [OutboundFrame] = []
        /// The batch small frames are still written into: `queue.last`, which keeps it alive.
        var openBatch: OutboundFrame.BatchWriter?
        var bufferedBytes = 0
        var isOpen = true
        var flushScheduled = false
        var closeRequest: (code: WebSocketCloseCode, reason: String)?
        var overflowed = false
        /// Frames accepted by `send` so far.
        var framesSent: UInt64 = 0

        /// Drops the frames not yet handed to the stream, and their bytes from the count.
        mutating func dropQueue() {
            bufferedBytes -= queue.reduce(0) { $0 + $1.count }
            queue.removeAll()
            openBatch = nil
        }

        /// The batch to write `count` more bytes into: the open one if it has room, else a new
        /// one queued after the rest.
        mutating func batch(room count: Int) -> OutboundFrame.BatchWriter {
            if let openBatch, openBatch.room >= count { return openBatch }
            let batch = OutboundFrame.batch(capacity: WebSocketConnection.batchCapacity)
            queue.append(batch)
            openBatch = batch.batchWriter
            return batch.batchWriter
        }
    }

    /// Frames of at most this many bytes are written into a batch (`OutboundFrame.batch`) with
    /// the small frames queued before and after them, instead of being queued on their own:
    /// answers and pushes of a busy connection cost one allocation and one write vector per
    /// batch (`sendBinary`, `sendText`, `sendCopy`).
    static let batchedFrameLimit = 256
    /// The bytes of one batch: within the allocator's per-thread cache for small blocks.
    static let batchCapacity = 960
    /// A server's binary message of at most this many bytes is copied into the queue's batch by
    /// `sendBinary` (its frame, header included, is at most `batchedFrameLimit`).
    public static var batchedBinaryLimit: Int { batchedFrameLimit - 4 }

    private static let ids = Atomic<UInt64>(1)

    /// Unique for the life of the process.
    public let id: UInt64
    /// The peer's address, "ip:port".
    public let remoteAddress: String
    /// The negotiated subprotocol, if any.
    public let subprotocol: String?
    /// The request target of the handshake (path and query).
    public let requestPath: String
    /// The handshake's request headers (server side) or response headers (client side), names
    /// lowercased, without the upgrade's own (`HTTPHead.handshakeHeaders`); empty on a server
    /// configured not to keep them.
    public let requestHeaders: [String: String]
    /// Which end of the connection this side is.
    public let role: WebSocketRole
    /// The loop that owns the socket and calls the handler.
    public let eventLoop: EventLoop
    /// Most bytes that may wait to be written before the connection is dropped as a slow
    /// consumer.
    public let maxOutboundBytes: Int

    private let outbound = Mutex(Outbound())
    /// `Outbound.isOpen`, readable without the lock (the engine asks for every message it
    /// receives, while other loops queue pushes under the lock); cleared with it, under the lock.
    private let openFlag = Atomic<Bool>(true)
    // Concurrency proof: `engineSlot` is only reached through `engine`, whose accessors check
    // `eventLoop.inEventLoop` (`checkConfined`), so every access happens on the connection's one
    // loop thread and is serialized. It is kept here rather than in a `LoopConfined` box, which
    // would be one more allocation per connection; as there, a plain read or write that never
    // overlaps another access, so not checked for exclusivity at run time.
    @exclusivity(unchecked) nonisolated(unsafe) private var engineSlot: WebSocketEngine?

    /// The engine driving this connection once it is open; only on its loop's thread.
    var engine: WebSocketEngine? {
        get { eventLoop.checkConfined(); return engineSlot }
        set { eventLoop.checkConfined(); engineSlot = newValue }
    }

    init(
        remoteAddress: String, subprotocol: String?, requestPath: String,
        requestHeaders: [String: String], role: WebSocketRole, eventLoop: EventLoop,
        maxOutboundBytes: Int
    ) {
        self.id = Self.ids.wrappingAdd(1, ordering: .relaxed).oldValue
        self.remoteAddress = remoteAddress
        self.subprotocol = subprotocol
        self.requestPath = requestPath
        self.requestHeaders = requestHeaders
        self.role = role
        self.eventLoop = eventLoop
        self.maxOutboundBytes = maxOutboundBytes
    }

    /// What the handler keeps for this connection (its per-connection state), so its calls find
    /// it without a shared table: set it in `webSocketOpened`. Only on `eventLoop`'s thread; kept
    /// by the connection's engine, so it is let go of once the connection has closed.
    public var handlerContext: AnyObject? {
        get { engine?.handlerContext }
        set { engine?.handlerContext = newValue }
    }

    /// True until a close starts from either side.
    public var isOpen: Bool { openFlag.load(ordering: .acquiring) }

    /// Bytes queued or in the socket's send queue of this process, not yet handed to the kernel.
    public var bufferedBytes: Int { outbound.withLock { $0.bufferedBytes } }

    /// Queues a pre-encoded frame; false when the connection is no longer open or the frame
    /// pushed the queue past `maxOutboundBytes` (the connection is then closed with 1008).
    @discardableResult
    public func send(_ frame: OutboundFrame) -> Bool {
        guard role == .server else { return queue(frame.masked(with: MaskKeys.next()), copying: true) }
        return queue(frame, copying: false)
    }

    /// Like `send`, for a frame this connection alone sends (a push to one receiver): a small one
    /// is copied into the queue's batch, which costs less than keeping a reference to it. A frame
    /// sent to many connections is better shared (`send`): one copy for all of them.
    @discardableResult
    public func sendCopy(of frame: OutboundFrame) -> Bool {
        guard role == .server else { return queue(frame.masked(with: MaskKeys.next()), copying: true) }
        return queue(frame, copying: true)
    }

    private func queue(_ frame: OutboundFrame, copying: Bool) -> Bool {
        let count = frame.count
        return queue(count: count) { state in
            if copying && count <= Self.batchedFrameLimit {
                state.batch(room: count).append(copyOf: frame)
            } else {
                state.queue.append(frame)
                state.openBatch = nil
            }
        }
    }

    /// Queues a frame of `count` bytes that `add` puts in the queue, unless it would take the
    /// queue past `maxOutboundBytes` (the connection is then closed with 1008); false when the
    /// frame was not queued.
    private func queue(count: Int, _ add: (inout Outbound) -> Void) -> Bool {
        let (accepted, schedule) = outbound.withLock { state -> (Bool, Bool) in
            guard state.isOpen else { return (false, false) }
            if state.bufferedBytes + count > maxOutboundBytes {
                state.isOpen = false
                openFlag.store(false, ordering: .releasing)
                state.overflowed = true
                state.dropQueue()
            } else {
                add(&state)
                state.bufferedBytes += count
                state.framesSent += 1
            }
            guard !state.flushScheduled else { return (!state.overflowed, false) }
            state.flushScheduled = true
            return (!state.overflowed, true)
        }
        if schedule { eventLoop.scheduleFlush(self) }
        return accepted
    }

    /// Sends `bytes` as one binary message.
    @discardableResult
    public func sendBinary(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { sendMessage(.binary, $0) }
    }

    /// Sends `bytes` as one binary message (copied before this returns).
    @discardableResult
    public func sendBinary(_ bytes: UnsafeRawBufferPointer) -> Bool {
        sendMessage(.binary, bytes)
    }

    /// Sends `text` as one text message.
    @discardableResult
    public func sendText(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { sendMessage(.text, UnsafeRawBufferPointer($0)) }
    }

    /// Encodes one data frame, masked already on a client, and queues it: a small one straight
    /// into the queue's batch.
    private func sendMessage(_ opcode: WebSocketOpcode, _ payload: UnsafeRawBufferPointer) -> Bool {
        let maskKey = role == .client ? MaskKeys.next() : nil
        let count = FrameHeader.encodedLength(payloadLength: payload.count, masked: maskKey != nil) + payload.count
        guard count <= Self.batchedFrameLimit else {
            return queue(.encoding(opcode: opcode, payload: payload, maskKey: maskKey), copying: false)
        }
        return queue(count: count) { state in
            state.batch(room: count).appendFrame(opcode: opcode, payload: payload, maskKey: maskKey)
        }
    }

    /// Sends a ping; the peer's pong is not reported.
    @discardableResult
    public func sendPing(_ payload: [UInt8] = []) -> Bool { send(.ping(payload)) }

    /// Starts the closing handshake after the frames already queued; later sends fail.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        let schedule = outbound.withLock { state -> Bool in
            guard state.isOpen else { return false }
            state.isOpen = false
            openFlag.store(false, ordering: .releasing)
            state.closeRequest = (code, reason)
            guard !state.flushScheduled else { return false }
            state.flushScheduled = true
            return true
        }
        if schedule { eventLoop.scheduleFlush(self) }
    }

    func flushOnLoop() {
        guard let engine else {
            outbound.withLock { state in
                state.flushScheduled = false
                state.dropQueue()
            }
            return
        }
        let stream = engine.stream
        let (closeRequest, overflowed) = outbound.withLock { state in
            state.flushScheduled = false
            state.openBatch = nil
            if !state.overflowed { stream.enqueue(contentsOf: &state.queue) }
            defer { state.closeRequest = nil }
            return (state.closeRequest, state.overflowed)
        }
        if overflowed {
            engine.closeSlowConsumer()
            return
        }
        stream.flush()
        if let closeRequest { engine.closeLocally(code: closeRequest.code, reason: closeRequest.reason) }
    }

    /// Stops accepting sends and drops what is not yet handed to the stream. Loop only.
    func markClosed() {
        outbound.withLock { state in
            state.isOpen = false
            openFlag.store(false, ordering: .releasing)
            state.dropQueue()
        }
    }

    /// Buffers queued and not yet taken by the stream (a batch of small frames counts once).
    var queuedBufferCount: Int { outbound.withLock { $0.queue.count } }

    /// Frames accepted by `send` so far; the engine watches it to see when the handler has
    /// stopped answering.
    var framesSent: UInt64 { outbound.withLock { $0.framesSent } }

    /// Counts queued bytes the stream dropped without writing them. Loop only.
    func didDrop(byteCount: Int) {
        outbound.withLock { $0.bufferedBytes -= byteCount }
    }

    /// Counts bytes the engine queued directly (control frames); returns the new total. Loop only.
    @discardableResult
    func didQueue(byteCount: Int) -> Int {
        outbound.withLock { state in
            state.bufferedBytes += byteCount
            return state.bufferedBytes
        }
    }

    /// Counts bytes the stream handed to the kernel. Loop only.
    func didWrite(byteCount: Int) {
        outbound.withLock { $0.bufferedBytes -= byteCount }
    }
}

extension WebSocketConnection: CustomStringConvertible {
    /// "WebSocket #id remote-address".
    public var description: String { "WebSocket #\(id) \(remoteAddress)" }
}
