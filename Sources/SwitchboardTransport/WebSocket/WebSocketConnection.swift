import Synchronization

/// One open WebSocket. Its metadata is immutable; sending and closing are safe from any thread.
///
/// Frames wait in one of two queues until the connection's event loop hands them to the socket in
/// one batch: those sent on the loop's own thread (answers, and a fan-out running on that loop)
/// in a queue only that thread touches, without a lock; those sent from other threads in a queue
/// under a lock, which the loop moves behind its own before it queues anything more, so frames
/// leave in the order they were sent.
public final class WebSocketConnection: Sendable, LoopFlushable {
    /// Frames waiting for the loop, small ones written into shared batches.
    private struct OutboundQueue {
        var frames: [OutboundFrame] = []
        /// The batch small frames are still written into: `frames.last`, which keeps it alive.
        var openBatch: OutboundFrame.BatchWriter?

        /// The batch to write `count` more bytes into: the open one if it has room, else a new
        /// one queued after the rest, four times the size of the one it follows (up to
        /// `largestBatchCapacity`): a connection busy in one loop pass pays for fewer batches.
        mutating func batch(room count: Int) -> OutboundFrame.BatchWriter {
            if let openBatch, openBatch.room >= count { return openBatch }
            let capacity = openBatch.map { min($0.capacity * 4, WebSocketConnection.largestBatchCapacity) } ?? WebSocketConnection.batchCapacity
            let batch = OutboundFrame.batch(capacity: capacity)
            frames.append(batch)
            openBatch = batch.batchWriter
            return batch.batchWriter
        }

        /// Queues `frame` as it is, after the rest.
        mutating func append(_ frame: OutboundFrame) {
            frames.append(frame)
            openBatch = nil
        }

        /// Moves `other`'s frames behind these.
        mutating func take(_ other: inout OutboundQueue) {
            if frames.isEmpty { swap(&frames, &other.frames) } else { frames.append(contentsOf: other.frames) }
            other.frames.removeAll(keepingCapacity: true)
            openBatch = nil
            other.openBatch = nil
        }

        /// Drops every frame; returns their bytes.
        mutating func drop() -> Int {
            let bytes = frames.reduce(0) { $0 + $1.count }
            frames.removeAll()
            openBatch = nil
            return bytes
        }
    }

    /// What only the loop's thread touches.
    private struct LoopOutbound {
        var queue = OutboundQueue()
        /// Bytes in `queue` or in the stream, not yet handed to the kernel.
        var bufferedBytes = 0
        /// Frames accepted on the loop's thread.
        var framesSent: UInt64 = 0
        var flushScheduled = false
    }

    /// What other threads hand to the loop, under `shared`'s lock.
    private struct SharedOutbound {
        var queue = OutboundQueue()
        /// Bytes in `queue`.
        var queuedBytes = 0
        /// Frames accepted from other threads.
        var framesSent: UInt64 = 0
        /// A flush of this side is scheduled on the loop (only while `sharedPending`).
        var flushScheduled = false
        var closeRequest: (code: WebSocketCloseCode, reason: String)?
        var overflowed = false
    }

    /// Frames of at most this many bytes are written into a batch (`OutboundFrame.batch`) with
    /// the small frames queued before and after them, instead of being queued on their own:
    /// answers and pushes of a busy connection cost one allocation and one write vector per
    /// batch (`sendBinary`, `sendText`, `sendCopy`).
    static let batchedFrameLimit = 256
    /// The bytes of a connection's first batch in a loop pass: within the allocator's per-thread
    /// cache for small blocks.
    static let batchCapacity = 960
    /// The bytes of the largest batch, for a connection that filled smaller ones in the same
    /// pass (a batch is let go of once written).
    static let largestBatchCapacity = 15_360
    /// A server's binary message of at most this many bytes is copied into the queue's batch by
    /// `sendBinary` (its frame, header included, is at most `batchedFrameLimit`).
    public static var batchedBinaryLimit: Int { batchedFrameLimit - 4 }

    private static let ids = Atomic<UInt64>(1)

    // Stored properties in the order a send reads them (a fan-out sends to every receiver's
    // connection in one pass): the loop's own, then those fixed at the handshake.

    /// The loop that owns the socket and calls the handler.
    public let eventLoop: EventLoop
    /// Most bytes that may wait to be written before the connection is dropped as a slow
    /// consumer.
    public let maxOutboundBytes: Int

    /// Which end of the connection this side is.
    public let role: WebSocketRole
    /// Whether `shared` holds frames, a close or an overflow for the loop; set and cleared under
    /// its lock, read without it by the loop before it queues or flushes.
    private let sharedPending = Atomic<Bool>(false)
    /// Whether sends are still accepted, readable without a lock; cleared under `shared`'s lock.
    private let openFlag = Atomic<Bool>(true)
    /// `LoopOutbound.bufferedBytes`, for other threads (stored by the loop, never added to).
    private let loopBufferedBytes = Atomic<Int>(0)
    // Concurrency proof: `loopSlot` is touched only on the connection's loop thread: by
    // `queue(count:_:)` once `eventLoop.inEventLoop` said so, by `queuedBufferCount` likewise, by
    // the loop's own calls (`flushOnLoop`, `markClosed`, `framesSent`, the `did…` counts), which
    // check `checkConfined` first, and by `takeShared`, `overflow()` and `dropQueues`, which only
    // those call. So every access is serialized on one thread; each is a plain read or write that
    // never overlaps another, so not checked for exclusivity at run time.
    @exclusivity(unchecked) nonisolated(unsafe) private var loopSlot = LoopOutbound()
    // Concurrency proof: `engineSlot` is only reached through `engine`, whose accessors check
    // `eventLoop.inEventLoop` (`checkConfined`), so every access happens on the connection's one
    // loop thread and is serialized. It is kept here rather than in a `LoopConfined` box, which
    // would be one more allocation per connection; as there, a plain read or write that never
    // overlaps another access, so not checked for exclusivity at run time.
    @exclusivity(unchecked) nonisolated(unsafe) private var engineSlot: WebSocketEngine?

    private let shared = Mutex(SharedOutbound())
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

    /// `handlerContext` without a reference counted for it: valid while the connection keeps it,
    /// as it does during a handler's call for this connection. Only on `eventLoop`'s thread.
    public var unretainedHandlerContext: Unmanaged<AnyObject>? {
        eventLoop.checkConfined()
        guard let context = engineSlot?.handlerContext else { return nil }
        return Unmanaged.passUnretained(context)
    }

    /// True until a close starts from either side.
    public var isOpen: Bool { openFlag.load(ordering: .acquiring) }

    /// Bytes queued or in the socket's send queue of this process, not yet handed to the kernel.
    public var bufferedBytes: Int {
        loopBufferedBytes.load(ordering: .relaxed) + shared.withLock { $0.queuedBytes }
    }

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
        return queue(count: count) { queue in
            if copying && count <= Self.batchedFrameLimit {
                queue.batch(room: count).append(copyOf: frame)
            } else {
                queue.append(frame)
            }
        }
    }

    /// Queues a frame of `count` bytes that `add` puts in a queue, unless it would take the
    /// connection past `maxOutboundBytes` (it is then closed with 1008); false when the frame was
    /// not queued. On the loop's thread without a lock, elsewhere under `shared`'s.
    private func queue(count: Int, _ add: (inout OutboundQueue) -> Void) -> Bool {
        guard eventLoop.inEventLoop else { return queueShared(count: count, add) }
        guard openFlag.load(ordering: .acquiring) else { return false }
        // Frames other threads queued before this one go first.
        if sharedPending.load(ordering: .acquiring) { takeShared(flushing: false) }
        guard loopSlot.bufferedBytes + count <= maxOutboundBytes else {
            overflow()
            return false
        }
        add(&loopSlot.queue)
        addLoopBytes(count)
        loopSlot.framesSent += 1
        if !loopSlot.flushScheduled {
            loopSlot.flushScheduled = true
            eventLoop.scheduleFlush(self)
        }
        return true
    }

    /// `queue(count:_:)` from a thread other than the loop's.
    private func queueShared(count: Int, _ add: (inout OutboundQueue) -> Void) -> Bool {
        let (accepted, schedule) = shared.withLock { state -> (Bool, Bool) in
            guard openFlag.load(ordering: .relaxed) else { return (false, false) }
            if state.queuedBytes + loopBufferedBytes.load(ordering: .relaxed) + count > maxOutboundBytes {
                overflow(&state)
            } else {
                add(&state.queue)
                state.queuedBytes += count
                state.framesSent += 1
            }
            return (!state.overflowed, markPending(&state))
        }
        if schedule { eventLoop.scheduleFlush(self) }
        return accepted
    }

    /// Marks `state` as waiting for the loop; true when a flush must be scheduled for it. Under
    /// `shared`'s lock.
    private func markPending(_ state: inout SharedOutbound) -> Bool {
        sharedPending.store(true, ordering: .releasing)
        guard !state.flushScheduled else { return false }
        state.flushScheduled = true
        return true
    }

    /// Stops sends past the bound: the queues are dropped and the loop closes the slow consumer.
    /// Under `shared`'s lock.
    private func overflow(_ state: inout SharedOutbound) {
        openFlag.store(false, ordering: .releasing)
        state.overflowed = true
        state.queuedBytes -= state.queue.drop()
    }

    /// `overflow(_:)` on the loop's thread, which drops its own queue too.
    private func overflow() {
        addLoopBytes(-loopSlot.queue.drop())
        let schedule = shared.withLock { state -> Bool in
            overflow(&state)
            return markPending(&state)
        }
        if schedule { eventLoop.scheduleFlush(self) }
    }

    /// Moves the frames other threads queued behind the loop's own and returns the close or
    /// overflow they left; a flush (`flushing`) takes those too, otherwise they stay for it.
    /// Loop only.
    @discardableResult
    private func takeShared(flushing: Bool) -> (closeRequest: (code: WebSocketCloseCode, reason: String)?, overflowed: Bool) {
        shared.withLock { state in
            loopSlot.queue.take(&state.queue)
            addLoopBytes(state.queuedBytes)
            state.queuedBytes = 0
            let taken = (state.closeRequest, state.overflowed)
            if flushing { state.closeRequest = nil }
            let waiting = !flushing && (taken.0 != nil || taken.1)
            sharedPending.store(waiting, ordering: .releasing)
            if !waiting { state.flushScheduled = false }
            return taken
        }
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

    /// Sends one binary message of `payloadCount` bytes, which `write` puts in the memory it is
    /// given (all of it): written straight into the queue's batch when small, so the payload is
    /// never copied on its way there. `write` is called once whether or not the message is
    /// queued, so it may keep what it wrote as well; false when not queued. It runs while the
    /// connection's queue is being written (under its lock, off the loop's thread), so it must
    /// not reach this connection.
    @discardableResult
    public func sendBinary(payloadCount: Int, write: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        sendMessage(.binary, payloadCount: payloadCount, write: write)
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
        sendMessage(opcode, payloadCount: payload.count) { if payload.count > 0 { $0.copyMemory(from: payload) } }
    }

    /// Encodes one data frame whose `payloadCount` bytes `write` fills (then masked on a client)
    /// and queues it: a small one straight into the queue's batch. `write` runs once, into
    /// memory of its own when the frame is not queued.
    private func sendMessage(_ opcode: WebSocketOpcode, payloadCount: Int, write: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        let maskKey = role == .client ? MaskKeys.next() : nil
        let count = FrameHeader.encodedLength(payloadLength: payloadCount, masked: maskKey != nil) + payloadCount
        guard count <= Self.batchedFrameLimit else {
            return queue(.make(opcode: opcode, payloadCount: payloadCount, fin: true, maskKey: maskKey, fill: write), copying: false)
        }
        var written = false
        let queued = queue(count: count) { queue in
            queue.batch(room: count).appendFrame(opcode: opcode, payloadCount: payloadCount, maskKey: maskKey, fill: write)
            written = true
        }
        if !written { withUnsafeTemporaryAllocation(byteCount: payloadCount, alignment: 1) { write($0) } }
        return queued
    }

    /// Sends a ping; the peer's pong is not reported.
    @discardableResult
    public func sendPing(_ payload: [UInt8] = []) -> Bool { send(.ping(payload)) }

    /// Starts the closing handshake after the frames already queued; later sends fail.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        let schedule = shared.withLock { state -> Bool in
            guard openFlag.load(ordering: .relaxed) else { return false }
            openFlag.store(false, ordering: .releasing)
            state.closeRequest = (code, reason)
            return markPending(&state)
        }
        if schedule { eventLoop.scheduleFlush(self) }
    }

    func flushOnLoop() {
        eventLoop.checkConfined()
        loopSlot.flushScheduled = false
        let (closeRequest, overflowed) = sharedPending.load(ordering: .acquiring) ? takeShared(flushing: true) : (nil, false)
        guard let engine = engineSlot else {
            dropQueues()
            return
        }
        if overflowed {
            engine.closeSlowConsumer()
            return
        }
        let stream = engine.stream
        stream.enqueue(contentsOf: &loopSlot.queue.frames)
        loopSlot.queue.openBatch = nil
        stream.flush()
        if let closeRequest { engine.closeLocally(code: closeRequest.code, reason: closeRequest.reason) }
    }

    /// Drops the frames not yet handed to the stream, and their bytes from the count. Loop only.
    private func dropQueues() {
        addLoopBytes(-loopSlot.queue.drop())
        shared.withLock { state in state.queuedBytes -= state.queue.drop() }
    }

    /// Stops accepting sends and drops what is not yet handed to the stream. Loop only.
    func markClosed() {
        eventLoop.checkConfined()
        shared.withLock { _ in openFlag.store(false, ordering: .releasing) }
        dropQueues()
    }

    /// Buffers queued and not yet taken by the stream (a batch of small frames counts once); off
    /// the loop's thread, those queued from other threads only.
    var queuedBufferCount: Int {
        shared.withLock { $0.queue.frames.count } + (eventLoop.inEventLoop ? loopSlot.queue.frames.count : 0)
    }

    /// Frames accepted by `send` so far; the engine watches it to see when the handler has
    /// stopped answering. Loop only.
    var framesSent: UInt64 {
        eventLoop.checkConfined()
        return loopSlot.framesSent + shared.withLock { $0.framesSent }
    }

    /// Counts queued bytes the stream dropped without writing them. Loop only.
    func didDrop(byteCount: Int) {
        changeLoopBytes(by: -byteCount)
    }

    /// Counts bytes the engine queued directly (control frames); returns the new total. Loop only.
    @discardableResult
    func didQueue(byteCount: Int) -> Int {
        changeLoopBytes(by: byteCount)
        return bufferedBytes
    }

    /// Counts bytes the stream handed to the kernel. Loop only.
    func didWrite(byteCount: Int) {
        changeLoopBytes(by: -byteCount)
    }

    private func changeLoopBytes(by delta: Int) {
        eventLoop.checkConfined()
        addLoopBytes(delta)
    }

    /// Adds `delta` to the loop's unsent bytes and publishes the total to other threads
    /// (`loopBufferedBytes`). Loop only; its callers have checked.
    @inline(__always)
    private func addLoopBytes(_ delta: Int) {
        loopSlot.bufferedBytes += delta
        loopBufferedBytes.store(loopSlot.bufferedBytes, ordering: .relaxed)
    }
}

extension WebSocketConnection: CustomStringConvertible {
    /// "WebSocket #id remote-address".
    public var description: String { "WebSocket #\(id) \(remoteAddress)" }
}
