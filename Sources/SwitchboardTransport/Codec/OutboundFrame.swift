/// A complete WebSocket frame, header and payload encoded once into one immutable buffer, so
/// the same instance can be queued to any number of connections without copying.
///
/// Frames built with the static constructors are unmasked (server to client); a client
/// connection derives a masked copy when it sends one.
public struct OutboundFrame: @unchecked Sendable {
    // Sendable proof: `storage` is written in full by the static constructors before the frame
    // is returned (so before it can be shared), never mutated afterwards, and freed when the last
    // frame referring to it goes. Its header (`Layout`) is written once, before the frame is
    // returned, and only read after. A batch (`batch(capacity:)`) is the one exception: its
    // `count` and the bytes after it are written only by the connection whose outbound queue
    // holds it as its last frame, under that queue's lock; the stream reads it only after taking
    // the queue under the same lock, and the connection never writes into it after that. (A
    // batch `joining` returns is filled before it is returned, like any other frame.)
    private let storage: Storage

    /// The layout and the bytes of a frame in one allocation.
    fileprivate final class Storage: ManagedBuffer<Layout, UInt8> {}

    /// What a frame knows of its bytes, stored in the same allocation ahead of them.
    fileprivate struct Layout {
        /// The frame's opcode.
        let opcode: WebSocketOpcode
        /// Size of the encoded WebSocket header, in bytes.
        let headerLength: Int
        /// Total encoded size, in bytes (grows while a batch is written).
        var count: Int
        /// Bytes the allocation holds.
        let capacity: Int
    }

    private init(storage: Storage) { self.storage = storage }

    /// One allocation holding the layout and `headerLength + payloadCount` bytes: the WebSocket
    /// header written, the payload written by `fill` and then masked with `maskKey` if given.
    static func make(
        opcode: WebSocketOpcode, payloadCount: Int, fin: Bool,
        maskKey: (UInt8, UInt8, UInt8, UInt8)?, fill: (UnsafeMutableRawBufferPointer) -> Void
    ) -> OutboundFrame {
        let headerLength = FrameHeader.encodedLength(payloadLength: payloadCount, masked: maskKey != nil)
        let count = headerLength + payloadCount
        let buffer = Storage.create(minimumCapacity: count) { _ in
            Layout(opcode: opcode, headerLength: headerLength, count: count, capacity: count)
        }
        buffer.withUnsafeMutablePointerToElements { start in
            write(
                into: UnsafeMutableRawBufferPointer(start: start, count: count), headerLength: headerLength,
                opcode: opcode, fin: fin, maskKey: maskKey, fill: fill)
        }
        return OutboundFrame(storage: unsafeDowncast(buffer, to: Storage.self))
    }

    /// Writes one frame into `memory`, exactly its size: the header, the payload written by
    /// `fill`, masked with `maskKey` if given.
    fileprivate static func write(
        into memory: UnsafeMutableRawBufferPointer, headerLength: Int, opcode: WebSocketOpcode, fin: Bool,
        maskKey: (UInt8, UInt8, UInt8, UInt8)?, fill: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let payloadCount = memory.count - headerLength
        FrameHeader.write(fin: fin, opcode: opcode, payloadLength: payloadCount, maskKey: maskKey, into: memory)
        let body = UnsafeMutableRawBufferPointer(rebasing: memory[headerLength...])
        fill(body)
        if let maskKey { applyMask(maskKey, to: body) }
    }

    /// Encodes one frame of `opcode` carrying `payload`, masked with `maskKey` if given.
    public static func encoding(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true,
        maskKey: (UInt8, UInt8, UInt8, UInt8)? = nil
    ) -> OutboundFrame {
        make(opcode: opcode, payloadCount: payload.count, fin: fin, maskKey: maskKey) {
            if payload.count > 0 { $0.copyMemory(from: payload) }
        }
    }

    /// Encodes one frame of `opcode` carrying `payload`.
    public static func encoding(opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true) -> OutboundFrame {
        payload.withUnsafeBytes { encoding(opcode: opcode, payload: $0, fin: fin) }
    }

    /// A binary message frame whose payload `write` puts straight into the frame's memory: it
    /// gets room for exactly `payloadCount` bytes, fills them and returns how many it wrote (all
    /// of them). One allocation and no copy, however the payload is built.
    public static func binary(payloadCount: Int, write: (UnsafeMutableRawBufferPointer) -> Int) -> OutboundFrame {
        make(opcode: .binary, payloadCount: payloadCount, fin: true, maskKey: nil) { body in
            precondition(write(body) == payloadCount, "a frame's payload not the size it was given")
        }
    }

    /// The bytes of `frames` back to back, as one frame to queue: sent, it writes them one after
    /// another. For the same frames going to many connections, which then count one reference
    /// and one write vector for all of them. Like a batch, it is bytes to write and nothing more
    /// (its `opcode` and `payload` mean nothing), for a server's connections, which send frames
    /// unmasked (a client's would mask it as one frame); `frames` must not be empty.
    public static func joining(_ frames: some Collection<OutboundFrame>) -> OutboundFrame {
        let count = frames.reduce(0) { $0 + $1.count }
        precondition(count > 0, "joining no bytes")
        // A batch filled here, before anyone else can reach it.
        let joined = batch(capacity: count)
        let writer = joined.batchWriter
        for frame in frames { writer.append(copyOf: frame) }
        return joined
    }

    /// Wraps bytes that are sent verbatim (used for handshake heads); never empty.
    static func wrapping(rawBytes: [UInt8]) -> OutboundFrame {
        precondition(!rawBytes.isEmpty, "a raw write needs bytes")
        return rawBytes.withUnsafeBytes { copying($0, opcode: .binary, headerLength: 0) }
    }

    /// One allocation of exactly `bytes` (not empty), with the layout given.
    private static func copying(_ bytes: UnsafeRawBufferPointer, opcode: WebSocketOpcode, headerLength: Int) -> OutboundFrame {
        let buffer = Storage.create(minimumCapacity: bytes.count) { _ in
            Layout(opcode: opcode, headerLength: headerLength, count: bytes.count, capacity: bytes.count)
        }
        buffer.withUnsafeMutablePointerToElements { start in
            UnsafeMutableRawPointer(start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        return OutboundFrame(storage: unsafeDowncast(buffer, to: Storage.self))
    }

    /// The layout, read through its address: `header` is a class's stored property, and reading
    /// it would be checked for exclusive access at run time (seen on the fan-out path).
    private var layout: Layout { storage.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// The frame's opcode.
    public var opcode: WebSocketOpcode { layout.opcode }
    /// Size of the encoded header, in bytes.
    public var headerLength: Int { layout.headerLength }

    /// A binary message frame.
    public static func binary(_ payload: [UInt8]) -> OutboundFrame {
        encoding(opcode: .binary, payload: payload)
    }

    /// A text message frame.
    public static func text(_ string: String) -> OutboundFrame {
        var string = string
        return string.withUTF8 { encoding(opcode: .text, payload: UnsafeRawBufferPointer($0)) }
    }

    /// A ping frame (payload at most 125 bytes).
    public static func ping(_ payload: [UInt8] = []) -> OutboundFrame {
        encoding(opcode: .ping, payload: Array(payload.prefix(125)))
    }

    /// A pong frame (payload at most 125 bytes).
    public static func pong(_ payload: [UInt8]) -> OutboundFrame {
        encoding(opcode: .pong, payload: Array(payload.prefix(125)))
    }

    /// A close frame; the reason is cut at a character boundary to fit a control frame.
    public static func close(code: WebSocketCloseCode?, reason: String = "") -> OutboundFrame {
        encoding(opcode: .close, payload: closePayload(code: code, reason: reason))
    }

    static func closePayload(code: WebSocketCloseCode?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var budget = 123
        for character in reason {
            let utf8 = Array(String(character).utf8)
            guard utf8.count <= budget else { break }
            budget -= utf8.count
            payload.append(contentsOf: utf8)
        }
        return payload
    }

    /// Total encoded size in bytes.
    public var count: Int { layout.count }

    /// The encoded frame, header followed by payload.
    public var bytes: [UInt8] { Array(encoded) }

    /// The encoded payload (masked if this frame is masked); valid as long as this instance is alive.
    public var payload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: encoded[headerLength...])
    }

    /// The whole encoded frame; valid as long as this instance is alive (the bytes are stored in
    /// the object itself, which never moves them).
    var encoded: UnsafeRawBufferPointer {
        storage.withUnsafeMutablePointers { layout, bytes in UnsafeRawBufferPointer(start: bytes, count: layout.pointee.count) }
    }

    // MARK: Batches

    /// An empty buffer of `capacity` bytes into which one connection writes small frames back to
    /// back (`batchWriter`): many frames for one allocation and one write
    /// vector. A batch is bytes to write and nothing more (its `opcode` and `payload` mean nothing);
    /// it is never shared while it is written into (see the proof above).
    static func batch(capacity: Int) -> OutboundFrame {
        let buffer = Storage.create(minimumCapacity: capacity) { _ in
            Layout(opcode: .binary, headerLength: 0, count: 0, capacity: capacity)
        }
        return OutboundFrame(storage: unsafeDowncast(buffer, to: Storage.self))
    }

    /// The bytes the frame's memory holds (more than `count` for a batch with room left).
    var capacity: Int { layout.capacity }

    /// This frame, or an exact copy of its bytes when most of its memory is unused (a batch
    /// handed over with a few frames in it): for frames that will wait behind unsent ones, so
    /// what waits for a slow peer takes about the memory its bytes are counted as.
    func trimmed() -> OutboundFrame {
        let layout = layout
        guard layout.capacity - layout.count > layout.count else { return self }
        return withExtendedLifetime(self) { Self.copying(encoded, opcode: layout.opcode, headerLength: layout.headerLength) }
    }

    /// This batch, to write into without reference counting.
    var batchWriter: BatchWriter { BatchWriter(storage: .passUnretained(storage)) }

    /// Writes into a batch it does not hold: valid only while the batch it was taken from is
    /// held (a connection's queue holds its open batch until the stream takes it).
    struct BatchWriter {
        fileprivate let storage: Unmanaged<Storage>

        /// The bytes the batch was made for.
        var capacity: Int { storage._withUnsafeGuaranteedRef { $0.header.capacity } }

        /// The bytes the batch can still take.
        var room: Int {
            storage._withUnsafeGuaranteedRef { $0.withUnsafeMutablePointerToHeader { $0.pointee.capacity - $0.pointee.count } }
        }

        /// Encodes one frame of `opcode` whose `payloadCount` bytes `fill` writes in place, at the
        /// end of the batch (then masked with `maskKey` if given), which must have room for it.
        func appendFrame(
            opcode: WebSocketOpcode, payloadCount: Int, maskKey: (UInt8, UInt8, UInt8, UInt8)?,
            fill: (UnsafeMutableRawBufferPointer) -> Void
        ) {
            let headerLength = FrameHeader.encodedLength(payloadLength: payloadCount, masked: maskKey != nil)
            append(count: headerLength + payloadCount) { memory in
                OutboundFrame.write(into: memory, headerLength: headerLength, opcode: opcode, fin: true, maskKey: maskKey, fill: fill)
            }
        }

        /// Copies the encoded bytes of `frame` to the end of the batch, which must have room for them.
        func append(copyOf frame: OutboundFrame) {
            let bytes = frame.encoded
            withExtendedLifetime(frame) { append(count: bytes.count) { $0.copyMemory(from: bytes) } }
        }

        /// Lets `write` fill the `count` bytes after the batch's end, then counts them in.
        private func append(count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) {
            storage._withUnsafeGuaranteedRef { batch in
                batch.withUnsafeMutablePointers { layout, bytes in
                    precondition(count <= layout.pointee.capacity - layout.pointee.count, "a batch written past its capacity")
                    write(UnsafeMutableRawBufferPointer(start: bytes + layout.pointee.count, count: count))
                    layout.pointee.count += count
                }
            }
        }
    }

    /// A copy of this unmasked frame with its payload masked by `key`, for the client role.
    func masked(with key: (UInt8, UInt8, UInt8, UInt8)) -> OutboundFrame {
        let fin = encoded[0] & 0x80 != 0
        return withExtendedLifetime(storage) { OutboundFrame.encoding(opcode: opcode, payload: payload, fin: fin, maskKey: key) }
    }
}
