/// What a load generator needs from a `storage` push or a `get…Metadata` answer, read in place:
/// the event type or request id, the set's revision and size, and the `ValueStamp` of its first
/// item.
public struct MetadataScan: Sendable, Equatable {
    /// The request answered; nil for a push.
    public var id: UInt32?
    /// `RtmStorageEventType` of a push (1 snapshot, 3 update); nil for an answer.
    public var eventType: Int?
    /// The set's `majorRevision`.
    public var majorRevision: Int64 = 0
    /// Items in the set.
    public var itemCount = 0
    /// The write the first item's value names, and when it was sent; nil when it names none.
    public var sequence: UInt64?
    public var timestamp: UInt64?

    /// Scans one server frame: nil unless it is a well-formed `storage` push or an `ok` answer
    /// with result `getChannelMetadata` or `getUserMetadata`.
    public static func scan(_ bytes: [UInt8]) -> MetadataScan? {
        bytes.withUnsafeBytes { raw in scan(raw) }
    }

    private static func scan(_ bytes: UnsafeRawBufferPointer) -> MetadataScan? {
        var cursor = MessagePackCursor(bytes: bytes)
        var result = MetadataScan()
        var isPush = false
        var isAnswer = false
        var isMetadata = false
        let read = cursor.readMap { key, cursor in
            if key.equals("t") {
                guard let type = cursor.string() else { return false }
                isPush = type.equals("storage")
                isAnswer = type.equals("ok")
                return true
            }
            if key.equals("result") {
                guard let name = cursor.string() else { return false }
                isMetadata = name.equals("getChannelMetadata") || name.equals("getUserMetadata")
                return true
            }
            if key.equals("id") { return cursor.requestId().map { result.id = $0 } != nil }
            if key.equals("eventType") { return cursor.integer().map { result.eventType = Int($0) } != nil }
            if key.equals("majorRevision") { return cursor.integer().map { result.majorRevision = $0 } != nil }
            if key.equals("items") { return cursor.items(into: &result) }
            return cursor.skip(depth: 0)
        }
        guard read, isPush ? result.id == nil : isAnswer && isMetadata && result.id != nil else { return nil }
        return result
    }
}

extension MessagePackCursor {
    /// Reads an array of item maps, counting them and reading the first one's value stamp.
    fileprivate mutating func items(into result: inout MetadataScan) -> Bool {
        guard let count = arrayHeader() else { return false }
        result.itemCount = count
        for index in 0..<count {
            let read = readMap { key, cursor in
                guard index == 0 && key.equals("value") else { return cursor.skip(depth: 0) }
                guard let value = cursor.string() else { return false }
                if let stamp = ValueStamp.read(value.raw) {
                    result.sequence = stamp.sequence
                    result.timestamp = stamp.timestamp
                }
                return true
            }
            guard read else { return false }
        }
        return true
    }
}
