/// The benchmark's message body: a send timestamp (little-endian `UInt64` nanoseconds of
/// `MonotonicClock`) in the first 8 bytes, then padding up to the requested size.
public enum PayloadStamp {
    /// Bytes the timestamp takes; the smallest payload.
    public static let timestampBytes = 8

    /// A body of `size` bytes (at least 8) stamped with `timestamp`.
    public static func make(size: Int, timestamp: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0x2e, count: Swift.max(size, timestampBytes))
        stamp(&bytes, with: timestamp)
        return bytes
    }

    /// Overwrites the first 8 bytes of `bytes` (at least 8 long) with `timestamp`.
    public static func stamp(_ bytes: inout [UInt8], with timestamp: UInt64) {
        precondition(bytes.count >= timestampBytes, "a stamped payload needs 8 bytes")
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: timestamp.littleEndian, toByteOffset: 0, as: UInt64.self) }
    }

    /// The timestamp at `offset` in `bytes`, or nil when fewer than 8 bytes follow it.
    public static func timestamp(in bytes: [UInt8], at offset: Int = 0) -> UInt64? {
        guard offset >= 0, bytes.count - offset >= timestampBytes else { return nil }
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
}
