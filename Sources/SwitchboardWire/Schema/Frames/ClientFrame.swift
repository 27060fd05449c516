import SwitchboardCore

/// A request from a client to the server: an id, which the answer echoes, and one operation.
public struct ClientFrame: Sendable, Hashable {
    /// The request id.
    public var id: UInt32
    /// What the client asks for.
    public var operation: ClientOperation
    /// The request id the client chose for logs (`"trace"`, up to `maxTraceBytes`): the server
    /// writes it in its log lines about this request. Optional; servers before it ignore it.
    public var trace: String?

    /// The longest trace, in bytes.
    public static let maxTraceBytes = 64

    /// Creates a request.
    public init(id: UInt32, _ operation: ClientOperation, trace: String? = nil) {
        self.id = id
        self.operation = operation
        self.trace = trace
    }

    /// The `"t"` value, which is also the operation name errors report.
    public var type: String { operation.name }
}

/// One client operation, grouped by feature: each feature's operations, their decoding and their
/// encoding live in a file of their own (`Features/`), so adding a feature adds one case here.
public enum ClientOperation: Sendable, Hashable {
    /// Login, logout, heartbeat, token renewal.
    case session(SessionOperation)
    /// Message channels and user channels: subscribe, unsubscribe, publish.
    case channel(ChannelOperation)
    /// Channel and user metadata, user-metadata subscriptions.
    case storage(StorageOperation)
    /// An extension module's own operation (`x.<name>`).
    case `extension`(ExtensionOperation)
    /// Stream channels and their topics.
    case stream(StreamOperation)
    /// Presence: whoNow, whereNow, temporary states, user-level presence.
    case presence(PresenceOperation)
    /// Locks: set, remove, acquire, release, revoke, list.
    case lock(LockOperation)

    /// The `"t"` value.
    public var name: String {
        switch self {
        case .session(let operation): operation.name
        case .channel(let operation): operation.name
        case .storage(let operation): operation.name
        case .extension(let operation): operation.name
        case .stream(let operation): operation.name
        case .presence(let operation): operation.name
        case .lock(let operation): operation.name
        }
    }

    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        switch self {
        case .session(let operation): operation.rateBudget
        case .channel(let operation): operation.rateBudget
        case .storage(let operation): operation.rateBudget
        case .extension(let operation): operation.rateBudget
        case .stream(let operation): operation.rateBudget
        case .presence(let operation): operation.rateBudget
        case .lock(let operation): operation.rateBudget
        }
    }

    /// The channel the operation is about, for logs; nil when it is about none.
    public var channelName: String? {
        switch self {
        case .session(let operation): operation.channelName
        case .channel(let operation): operation.channelName
        case .storage(let operation): operation.channelName
        case .extension(let operation): operation.channelName
        case .stream(let operation): operation.channelName
        case .presence(let operation): operation.channelName
        case .lock(let operation): operation.channelName
        }
    }

    /// Decodes the operation named by `head.type`; nil when no feature knows that name.
    static func decode<Bytes>(_ head: FrameHead, _ fields: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        // Publishing first: it is nearly every frame a busy server reads.
        // Each operation is moved into the frame's, not copied (a retain and a release of each
        // of its strings and of its payload).
        if let operation = try ChannelOperation.decode(head, &fields) { return .channel(consume operation) }
        if let operation = try SessionOperation.decode(head, &fields) { return .session(consume operation) }
        if let operation = try StorageOperation.decode(head, &fields) { return .storage(consume operation) }
        if let operation = try ExtensionOperation.decode(head, &fields) { return .extension(consume operation) }
        if let operation = try StreamOperation.decode(head, &fields) { return .stream(consume operation) }
        if let operation = try PresenceOperation.decode(head, &fields) { return .presence(consume operation) }
        if let operation = try LockOperation.decode(head, &fields) { return .lock(consume operation) }
        return nil
    }

    /// Writes the operation's fields after the frame's head.
    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .session(let operation): operation.encodeFields(&frame)
        case .channel(let operation): operation.encodeFields(&frame)
        case .storage(let operation): operation.encodeFields(&frame)
        case .extension(let operation): operation.encodeFields(&frame)
        case .stream(let operation): operation.encodeFields(&frame)
        case .presence(let operation): operation.encodeFields(&frame)
        case .lock(let operation): operation.encodeFields(&frame)
        }
    }
}

/// A client operation that knows its `"t"` name (every feature's operation enum is one).
public protocol NamedOperation: Sendable, Hashable {
    /// The `"t"` value, which errors report as the operation.
    var name: String { get }
    /// The per-client call budget the operation draws on (the server refuses past it, the SDK
    /// paces its own calls within it); nil when it draws on none.
    var rateBudget: RateBudget? { get }
}

/// A family of client operations as one feature defines them.
protocol ClientOperationFamily: NamedOperation {
    /// Decodes the operation named by `head.type`; nil when the name is not this family's.
    static func decode<Bytes>(_ head: FrameHead, _ fields: inout MessagePackReader<Bytes>) throws(WireError) -> Self?
    /// Writes the fields (keys and values, without `"t"` and `"id"`).
    func encodeFields(_ frame: inout FrameWriter)
    /// The channel the operation is about, for logs; nil when it is about none.
    var channelName: String? { get }
}

extension ClientFrame {
    /// Decodes one client frame; on failure the error carries the request id and type if they
    /// were readable.
    public static func decode<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ClientFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        try decoding(bytes)
    }

    /// Decodes one client frame from memory the caller holds: read in place, with no reference
    /// counting (the server's path for every frame); a publish laid out as clients write it in
    /// one pass (`HotPublish`).
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> ClientFrame {
        if let publish = HotPublish.decode(bytes) { return publish }
        return try decoding(bytes)
    }

    /// The publish in `bytes` read in place, if it is laid out as clients write it and every
    /// value reads (`HotPublish`); nil for any other frame, to `decode`.
    public static func publishView(_ bytes: UnsafeBufferPointer<UInt8>) -> PublishView? {
        HotPublish.view(bytes)
    }

    private static func decoding<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ClientFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        var reader = MessagePackReader(bytes)
        let head = try reader.readFrameHead()
        guard let operation = try ClientOperation.decode(head, &reader) else {
            throw WireError(.unknownMessageType(head.type), offset: 0, requestId: head.id, messageType: head.type)
        }
        return ClientFrame(id: try head.requiredId(), consume operation, trace: head.trace)
    }

    /// Decodes one client frame from a byte array.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> ClientFrame {
        try decode(bytes[...])
    }

    /// The frame as one MessagePack map: `"t"`, then `"id"`, then the fields.
    public func encode() -> [UInt8] {
        var frame = FrameWriter(type: type, id: id)
        if let trace { frame.field(.trace) { $0.writeString(trace) } }
        operation.encodeFields(&frame)
        return frame.finish()
    }
}
