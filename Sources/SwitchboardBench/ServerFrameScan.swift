import Glibc

/// What a load generator needs from a server frame, read in place without decoding it: a
/// `message` push's payload timestamp, or an answer's id and outcome.
///
/// It walks the MessagePack map comparing key bytes where they lie, so a delivery costs no
/// allocation and no string building; anything it does not expect makes it `.other`.
public enum ServerFrameScan: Equatable, Sendable {
    /// A `message` push whose body is binary and starts with a `PayloadStamp` timestamp.
    case message(timestamp: UInt64)
    /// `ok` or `loginOk` answering request `id`.
    case ok(id: UInt32)
    /// `error` answering request `id`.
    case error(id: UInt32)
    /// Any other frame (including a message whose body carries no timestamp).
    case other

    /// Scans one MessagePack-encoded server frame.
    public init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { Self.scan($0) ?? .other }
    }

    /// Scans one MessagePack-encoded server frame where it lies.
    public init(_ bytes: UnsafeRawBufferPointer) {
        self = Self.scan(bytes) ?? .other
    }

    private enum FrameType { case message, ok, error, other }

    private static func scan(_ bytes: UnsafeRawBufferPointer) -> ServerFrameScan? {
        var cursor = MessagePackCursor(bytes: bytes)
        guard let fields = cursor.mapHeader() else { return nil }
        var type = FrameType.other
        var id: UInt32?
        var timestamp: UInt64?
        for _ in 0..<fields {
            guard let key = cursor.string() else { return nil }
            if key.equals("t") {
                guard let value = cursor.string() else { return nil }
                type =
                    value.equals("message") ? .message
                    : value.equals("ok") || value.equals("loginOk") ? .ok
                    : value.equals("error") ? .error : .other
            } else if key.equals("id") {
                guard let value = cursor.unsigned(), value <= UInt64(UInt32.max) else { return nil }
                id = UInt32(value)
            } else if key.equals("message"), let body = cursor.binary() {
                if body.count >= PayloadStamp.timestampBytes {
                    timestamp = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: body.lowerBound, as: UInt64.self))
                }
            } else {
                guard cursor.skip(depth: 0) else { return nil }
            }
            // What the generator needs is known: leave the remaining fields unread.
            if type == .message && timestamp != nil { break }
            if (type == .ok || type == .error) && id != nil { break }
        }
        switch (type, id, timestamp) {
        case (.message, _, let timestamp?): return .message(timestamp: timestamp)
        case (.ok, let id?, _): return .ok(id: id)
        case (.error, let id?, _): return .error(id: id)
        default: return .other
        }
    }
}
