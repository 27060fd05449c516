/// A request frame encoded once and written again for each send with only its id and its
/// payload's stamp changed in place: a load generator sending the same publish over and over
/// spends a copy on it, not an encoding and its allocations (the C load generators of
/// `tools/reference/` send pre-encoded frames the same way).
public struct StampedFrameTemplate: Sendable {
    /// The frame as first encoded.
    public let bytes: [UInt8]
    /// Where the id's 4 big-endian bytes lie (after its MessagePack uint32 marker).
    private let idOffset: Int
    /// Where the payload's 8-byte stamp lies (`PayloadStamp`).
    private let stampOffset: Int

    /// The template of `frame`, which was encoded with the id `id` written as a MessagePack uint32
    /// (0xce and 4 bytes: ids from 2^31 always are) and a payload stamped `stamp`; nil unless each
    /// occurs exactly once in `frame`, where the same frame for other values would differ.
    public init?(frame: [UInt8], id: UInt32, stamp: UInt64) {
        let idBytes: [UInt8] = [0xce] + withUnsafeBytes(of: id.bigEndian) { Array($0) }
        let stampBytes = withUnsafeBytes(of: stamp.littleEndian) { Array($0) }
        guard let idAt = Self.onlyOccurrence(of: idBytes, in: frame),
            let stampAt = Self.onlyOccurrence(of: stampBytes, in: frame)
        else { return nil }
        bytes = frame
        idOffset = idAt + 1
        stampOffset = stampAt
    }

    /// The frame's size in bytes.
    public var count: Int { bytes.count }

    /// Writes the frame with `id` and `stamp` into `buffer`, which holds `count` bytes.
    public func write(id: UInt32, stamp: UInt64, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= bytes.count, "a buffer smaller than the frame")
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        buffer.storeBytes(of: id.bigEndian, toByteOffset: idOffset, as: UInt32.self)
        buffer.storeBytes(of: stamp.littleEndian, toByteOffset: stampOffset, as: UInt64.self)
    }

    /// The index of `pattern` in `bytes` if it occurs there once and only once.
    private static func onlyOccurrence(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        let found = (0...(bytes.count - pattern.count)).filter { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
        return found.count == 1 ? found[0] : nil
    }
}
