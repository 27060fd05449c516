import SwitchboardCore

/// A frame from the server: an answer to a request (echoing its id) or a push (no id).
public enum ServerFrame: Sendable, Hashable {
    /// A request succeeded; the answer carries its result, if the operation has one.
    case answer(id: UInt32, Answer)
    /// A request failed.
    case error(id: UInt32, RtmError)
    /// Something the server sends unasked.
    case push(Push)
    /// The server is about to close the connection, and why.
    case closing(reason: RtmLinkStateChangeReason, detail: String)

    /// The id of the request this answers; nil for pushes.
    public var requestId: UInt32? {
        switch self {
        case .answer(let id, _), .error(let id, _): id
        case .push, .closing: nil
        }
    }

    /// The `"t"` value.
    public var type: String {
        switch self {
        case .answer(_, let answer): answer.frameType
        case .error: "error"
        case .push(let push): Wire.pushType(push)
        case .closing: "closing"
        }
    }
}

/// The result of a successful request, grouped by feature (one case per feature with results).
public enum Answer: Sendable, Hashable {
    /// Success with no data (`{"t": "ok", "id": …}`).
    case done
    /// Session results (the login answer).
    case session(SessionAnswer)
    /// Storage results (the metadata a `get` read).
    case storage(StorageAnswer)
    /// An extension operation's answer.
    case `extension`(ExtensionAnswer)
    /// Stream-channel results (the topic subscription answer).
    case stream(StreamAnswer)
    /// Presence results (whoNow, whereNow, getState, getUserPresence).
    case presence(PresenceAnswer)
    /// Lock results (`acquireLock`, `getLocks`).
    case lock(LockAnswer)

    /// The `"t"` value: `"ok"`, or a feature's own (`"loginOk"`).
    var frameType: String {
        switch self {
        case .done: "ok"
        case .session(let answer): answer.frameType
        case .storage(let answer): answer.frameType
        case .extension(let answer): answer.frameType
        case .stream(let answer): answer.frameType
        case .presence(let answer): answer.frameType
        case .lock(let answer): answer.frameType
        }
    }

    /// Writes the answer's fields after the frame's head.
    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .done: break
        case .session(let answer): answer.encodeFields(&frame)
        case .storage(let answer): answer.encodeFields(&frame)
        case .extension(let answer): answer.encodeFields(&frame)
        case .stream(let answer): answer.encodeFields(&frame)
        case .presence(let answer): answer.encodeFields(&frame)
        case .lock(let answer): answer.encodeFields(&frame)
        }
    }

    /// Decodes an answer frame; nil when no feature knows its type and result name.
    static func decode<Bytes>(_ head: FrameHead, _ fields: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        if head.type == "ok" && head.result == nil { return .done }
        if let answer = try SessionAnswer.decode(head, &fields) { return .session(answer) }
        if let answer = try StorageAnswer.decode(head, &fields) { return .storage(answer) }
        if let answer = try ExtensionAnswer.decode(head, &fields) { return .extension(answer) }
        if let answer = try StreamAnswer.decode(head, &fields) { return .stream(answer) }
        if let answer = try PresenceAnswer.decode(head, &fields) { return .presence(answer) }
        if let answer = try LockAnswer.decode(head, &fields) { return .lock(answer) }
        return nil
    }
}

/// A family of answers as one feature defines them.
protocol AnswerFamily: Sendable, Hashable {
    /// The `"t"` value (`"ok"` for answers named by `"result"`).
    var frameType: String { get }
    /// Writes the fields (and `"result"`, if the family uses it).
    func encodeFields(_ frame: inout FrameWriter)
    /// Decodes the answer if `head` (its type and result name) is this family's.
    static func decode<Bytes>(_ head: FrameHead, _ fields: inout MessagePackReader<Bytes>) throws(WireError) -> Self?
}

extension ServerFrame {
    /// Decodes one server frame.
    public static func decode<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ServerFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        var reader = MessagePackReader(bytes)
        let head = try reader.readFrameHead()
        if head.id != nil {
            if head.type == "error" { return try decodeError(&reader, head) }
            if let answer = try Answer.decode(head, &reader) { return .answer(id: try head.requiredId(), answer) }
        } else {
            if head.type == "closing" { return try decodeClosing(&reader, head) }
            if let push = try Wire.decodePush(head, &reader) { return .push(push) }
        }
        throw WireError(.unknownMessageType(head.type), offset: 0, requestId: head.id, messageType: head.type)
    }

    /// Decodes one server frame from a byte array.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> ServerFrame {
        try decode(bytes[...])
    }

    /// The size of `{"t": "ok", "id": id}`, the answer of most requests, as `writeOkAnswer`
    /// writes it.
    @inlinable
    public static func okAnswerSize(id: UInt32) -> Int {
        // The map header and `"t": "ok", "id"`, then the id.
        9 + MessagePackSize.uint(UInt64(id))
    }

    /// Writes `{"t": "ok", "id": id}` into `buffer`, exactly `okAnswerSize(id:)` bytes, encoded
    /// exactly as `encode()` would: for an answer written straight where it is sent.
    @inlinable
    public static func writeOkAnswer(id: UInt32, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count == okAnswerSize(id: id), "an ok answer written into memory of another size")
        var count = 0
        func put(_ byte: UInt8) {
            buffer[count] = byte
            count += 1
        }
        // A map of two: "t": "ok", "id": …
        put(0x82); put(0xa1); put(0x74); put(0xa2); put(0x6f); put(0x6b); put(0xa2); put(0x69); put(0x64)
        switch id {
        case 0...0x7f: put(UInt8(id))
        case 0x80...0xff: put(0xcc); put(UInt8(id))
        case 0x100...0xffff: put(0xcd); put(UInt8(id >> 8)); put(UInt8(truncatingIfNeeded: id))
        default:
            put(0xce)
            for shift in [24, 16, 8, 0] { put(UInt8(truncatingIfNeeded: id >> shift)) }
        }
    }

    /// The frame as one MessagePack map: `"t"`, then `"id"` for answers, then the fields.
    public func encode() -> [UInt8] {
        switch self {
        case .answer(let id, let answer):
            var frame = FrameWriter(type: answer.frameType, id: id)
            answer.encodeFields(&frame)
            return frame.finish()
        case .error(let id, let error):
            var frame = FrameWriter(type: "error", id: id, capacity: 64 + error.reason.utf8.count)
            frame.field(.code) { $0.writeInt(Int64(error.code.rawValue)) }
            frame.field(.operation) { $0.writeString(error.operation) }
            frame.field(.reason) { $0.writeString(error.reason) }
            return frame.finish()
        case .push(let push):
            return Wire.encodePush(push)
        case .closing(let reason, let detail):
            var frame = FrameWriter(type: "closing", id: nil, capacity: 40 + detail.utf8.count)
            frame.field(.reason) { $0.writeInt(Int64(reason.rawValue)) }
            frame.field(.detail) { $0.writeString(detail) }
            return frame.finish()
        }
    }

    private static func decodeError<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead
    ) throws(WireError) -> ServerFrame {
        var code: RtmErrorCode?
        var operation = ""
        var reason = ""
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .code:
                let start = reader.offset
                let raw = try reader.readInteger(Int.self)
                guard let known = RtmErrorCode(rawValue: raw) else {
                    throw WireError(.invalidValue("unknown error code \(raw)"), offset: start)
                }
                code = known
            case .operation: operation = try reader.readString()
            case .reason: reason = try reader.readString()
            default: return false
            }
            return true
        }
        return .error(id: try head.requiredId(), RtmError(try head.required(code, .code), operation: operation, reason: reason))
    }

    private static func decodeClosing<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead
    ) throws(WireError) -> ServerFrame {
        var reason: Int?
        var detail = ""
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .reason: reason = try reader.readInteger(Int.self)
            case .detail: detail = try reader.readString()
            default: return false
            }
            return true
        }
        let code = try head.required(reason, .reason)
        return .closing(reason: RtmLinkStateChangeReason(rawValue: code) ?? .unknown, detail: detail)
    }
}
