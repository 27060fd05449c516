/// What is known about a frame after a first pass over its map: its type, its request id, and
/// where its entries start.
struct FrameHead: Sendable {
    /// The `"t"` value.
    var type: String
    /// The `"id"` value, if present.
    var id: UInt32?
    /// The `"result"` value of an answer that carries data (it names the result's shape).
    var result: String?
    /// The `"trace"` value of a request: the request id the client chose for logs.
    var trace: String?
    /// How many entries the map has.
    var count: Int
    /// The index of the first entry.
    var bodyStart: Int
    /// The known keys other than `"t"`, `"id"` and `"result"` with where their values start, in
    /// map order, so `readFields` goes straight to the values; incomplete for a map with more such
    /// keys than `RecordedFields` holds (`readFields` then reads the keys again).
    var fields: RecordedFields

    /// An error for a required key that is absent.
    func missing(_ key: FrameKey) -> WireError {
        WireError(.missingKey(key.rawValue), offset: 0, requestId: id, messageType: type)
    }

    /// `value`, or the missing-key error for `key`.
    @inline(__always)
    func required<T>(_ value: T?, _ key: FrameKey) throws(WireError) -> T {
        guard let value else { throw missing(key) }
        return value
    }

    /// The request id, required for requests and responses.
    func requiredId() throws(WireError) -> UInt32 {
        try required(id, .id)
    }
}

/// Up to 16 entries of a frame's map: each known key and the offset of its value.
struct RecordedFields {
    static let capacity = 16
    #if os(Linux) && !SWITCHBOARD_PORTABLE
    private var entries = InlineArray<16, (key: FrameKey, valueOffset: Int32)>(repeating: (.t, 0))
    #else
    /// An array of the same entries: `InlineArray` needs macOS 26 / iOS 26.
    private var entries = [(key: FrameKey, valueOffset: Int32)](repeating: (.t, 0), count: 16)
    #endif
    private(set) var count = 0
    /// False once an entry found no room (or its offset did not fit): the entries are not all.
    private(set) var isComplete = true

    /// Adds an entry, or marks the record incomplete when there is no room.
    mutating func append(_ key: FrameKey, valueOffset: Int) {
        guard isComplete, count < Self.capacity, let offset = Int32(exactly: valueOffset) else {
            isComplete = false
            return
        }
        entries[count] = (key, offset)
        count += 1
    }

    subscript(index: Int) -> (key: FrameKey, valueOffset: Int32) { entries[index] }
}

extension FrameHead {
    /// The types nearly every frame of a busy server carries, made into strings once: a frame of
    /// one of these types is read without making its type's string.
    static let commonTypes = NameMatcher(
        [
            ChannelOperation.wireNames.name(of: .publish), StreamOperation.wireNames.name(of: .publishTopicMessage),
            SessionOperation.wireNames.name(of: .heartbeat), ChannelOperation.wireNames.name(of: .subscribe),
            ChannelOperation.wireNames.name(of: .unsubscribe),
        ].map { (value: $0, name: $0) })
}

extension MessagePackReader {
    /// Reads a frame's `"t"` value: one of the common types without making a string.
    mutating func readFrameType() throws(WireError) -> String {
        let start = position
        let range = try readStringRange()
        let common = bytes.withContiguousStorageIfAvailable { storage in
            FrameHead.commonTypes.match(
                UnsafeBufferPointer(rebasing: storage[(range.lowerBound - bytes.startIndex)...].prefix(range.count)))
        }
        if let common = common ?? nil { return common }
        position = start
        return try readString()
    }

    /// Reads the frame's map once to find `"t"` and `"id"` and checks that nothing follows it,
    /// then rewinds to the first entry.
    mutating func readFrameHead() throws(WireError) -> FrameHead {
        var type: String?
        var id: UInt32?
        var result: String?
        var trace: String?
        var key: FrameKey?
        var badType: WireError?
        let count: Int
        let bodyStart: Int
        var fields = RecordedFields()
        do throws(WireError) {
            count = try readMapHeader()
            bodyStart = position
            for _ in 0..<count {
                key = nil
                let entryKey = try readFrameKey()
                switch entryKey {
                case .t?:
                    key = .t
                    // A mistyped "t" is reported after the rest is read, so the answer can carry the id.
                    if try peekType() == .string {
                        type = try readFrameType()
                    } else {
                        badType = badType ?? mismatch("string")
                        try skipValue()
                    }
                case .id?:
                    key = .id
                    id = try readInteger(UInt32.self)
                case .result?:
                    key = .result
                    result = try readString()
                case .trace?:
                    key = .trace
                    // nil is no trace.
                    if try peekType() == .nil {
                        try skipValue()
                    } else {
                        let text = try readString()
                        guard text.utf8.count <= ClientFrame.maxTraceBytes else {
                            throw WireError(.invalidValue("trace is longer than \(ClientFrame.maxTraceBytes) bytes"), offset: offset)
                        }
                        trace = text
                    }
                default:
                    if let entryKey { fields.append(entryKey, valueOffset: offset) }
                    try skipValue()
                }
            }
            key = nil
            guard isAtEnd else { throw WireError(.trailingBytes(remaining), offset: offset) }
            if let badType {
                key = .t
                throw badType
            }
        } catch {
            var failure = error
            failure.requestId = id
            failure.messageType = type
            failure.key = key?.rawValue
            throw failure
        }
        guard let type else {
            throw WireError(.missingKey("t"), offset: 0, requestId: id)
        }
        position = bodyStart
        return FrameHead(type: type, id: id, result: result, trace: trace, count: count, bodyStart: bodyStart, fields: fields)
    }

    /// Reads the entries of the frame after `readFrameHead`, handing each known key other than
    /// `"t"` and `"id"` to `visit`, which reads its value (exactly that one value) and returns
    /// true, or reads nothing and returns false to have it skipped. Unknown keys are skipped.
    /// Errors name the key and the frame.
    mutating func readFields(
        _ head: FrameHead, _ visit: (FrameKey, inout Self) throws(WireError) -> Bool
    ) throws(WireError) {
        position = head.bodyStart
        var current: FrameKey?
        do throws(WireError) {
            if head.fields.isComplete {
                // The first pass checked every entry's shape: go straight to each value.
                for index in 0..<head.fields.count {
                    let (key, valueOffset) = head.fields[index]
                    current = key
                    position = bytes.startIndex + Int(valueOffset)
                    _ = try visit(key, &self)
                }
                position = bytes.endIndex
                return
            }
            for _ in 0..<head.count {
                current = nil
                guard let key = try readFrameKey(), key != .t, key != .id, key != .result, key != .trace else {
                    try skipValue()
                    continue
                }
                current = key
                if try !visit(key, &self) { try skipValue() }
            }
        } catch {
            var failure = error
            failure.requestId = head.id
            failure.messageType = head.type
            failure.key = current?.rawValue
            throw failure
        }
    }
}
