import SwitchboardCore

/// The storage feature's requests: channel and user metadata, and user-metadata subscriptions.
public enum StorageOperation: ClientOperationFamily {
    /// The channel it is about (for logs).
    public var channelName: String? {
        switch self {
        case .writeChannel(_, _, let channel, _, _, _), .getChannel(_, let channel): channel
        case .writeUser, .getUser, .subscribeUser, .unsubscribeUser: nil
        }
    }

    /// `setChannelMetadata`, `updateChannelMetadata` or `removeChannelMetadata`.
    case writeChannel(
        MetadataWriteKind, channelType: RtmChannelType, channel: String, data: Metadata, options: MetadataOptions,
        lock: String?)
    /// `getChannelMetadata`.
    case getChannel(channelType: RtmChannelType, channel: String)
    /// `setUserMetadata`, `updateUserMetadata` or `removeUserMetadata`.
    case writeUser(MetadataWriteKind, userId: String, data: Metadata, options: MetadataOptions)
    /// `getUserMetadata`.
    case getUser(userId: String)
    /// `subscribeUserMetadata`.
    case subscribeUser(userId: String)
    /// `unsubscribeUserMetadata`.
    case unsubscribeUser(userId: String)

    public var name: String {
        switch self {
        case .writeChannel(let kind, _, _, _, _, _): kind.channelOperation
        case .getChannel: GetChannelMetadata.operation
        case .writeUser(let kind, _, _, _): kind.userOperation
        case .getUser: GetUserMetadata.operation
        case .subscribeUser: SubscribeUserMetadata.operation
        case .unsubscribeUser: UnsubscribeUserMetadata.operation
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        let type = head.type
        let channelKind = MetadataWriteKind.allCases.first { $0.channelOperation == type }
        let userKind = MetadataWriteKind.allCases.first { $0.userOperation == type }
        let isChannel = channelKind != nil || type == GetChannelMetadata.operation
        let isUser =
            userKind != nil || type == GetUserMetadata.operation || type == SubscribeUserMetadata.operation
            || type == UnsubscribeUserMetadata.operation
        guard isChannel || isUser else { return nil }
        let writes = channelKind != nil || userKind != nil
        var channelType: RtmChannelType?
        var channel: String?
        var userId: String?
        var data = Metadata()
        var options = MetadataOptions()
        var lock: String?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType where isChannel: channelType = try reader.readChannelType(allowed: ChannelTypes.named)
            case .channel where isChannel: channel = try reader.readString()
            case .userId where isUser: userId = try reader.readString()
            case .majorRevision where writes: data.majorRevision = try reader.readInteger(Int64.self)
            case .items where writes: data.items = try reader.readMetadataItems()
            case .recordTs where writes: options.recordTs = try reader.readBool()
            case .recordUserId where writes: options.recordUserId = try reader.readBool()
            case .lock where channelKind != nil: lock = try reader.readString()
            case .fencingToken where channelKind != nil: options.fencingToken = try reader.readInteger(UInt64.self)
            default: return false
            }
            return true
        }
        if let channelKind {
            return .writeChannel(
                channelKind, channelType: try head.required(channelType, .channelType),
                channel: try head.required(channel, .channel), data: data, options: options, lock: lock)
        }
        if isChannel {
            return .getChannel(channelType: try head.required(channelType, .channelType), channel: try head.required(channel, .channel))
        }
        let user = try head.required(userId, .userId)
        if let userKind { return .writeUser(userKind, userId: user, data: data, options: options) }
        switch type {
        case GetUserMetadata.operation: return .getUser(userId: user)
        case SubscribeUserMetadata.operation: return .subscribeUser(userId: user)
        default: return .unsubscribeUser(userId: user)
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .writeChannel(_, let channelType, let channel, let data, let options, let lock):
            frame.field(.channelType) { $0.writeInt(Int64(channelType.rawValue)) }
            frame.field(.channel) { $0.writeString(channel) }
            Self.encodeWrite(data, options, into: &frame)
            if let lock { frame.field(.lock) { $0.writeString(lock) } }
            if let token = options.fencingToken { frame.field(.fencingToken) { $0.writeUInt(token) } }
        case .getChannel(let channelType, let channel):
            frame.field(.channelType) { $0.writeInt(Int64(channelType.rawValue)) }
            frame.field(.channel) { $0.writeString(channel) }
        case .writeUser(_, let userId, let data, let options):
            frame.field(.userId) { $0.writeString(userId) }
            Self.encodeWrite(data, options, into: &frame)
        case .getUser(let userId), .subscribeUser(let userId), .unsubscribeUser(let userId):
            frame.field(.userId) { $0.writeString(userId) }
        }
    }

    private static func encodeWrite(_ data: Metadata, _ options: MetadataOptions, into frame: inout FrameWriter) {
        frame.field(.majorRevision) { $0.writeInt(data.majorRevision) }
        frame.field(.items) { $0.writeMetadataItems(data.items) }
        if options.recordTs { frame.field(.recordTs) { $0.writeBool(true) } }
        if options.recordUserId { frame.field(.recordUserId) { $0.writeBool(true) } }
    }
}

/// The storage feature's answers: the metadata a `get` read.
public enum StorageAnswer: AnswerFamily {
    /// The answer to `getChannelMetadata`.
    case channelMetadata(Metadata)
    /// The answer to `getUserMetadata`.
    case userMetadata(Metadata)

    var frameType: String { "ok" }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .channelMetadata(let data):
            frame.field(.result) { $0.writeString(GetChannelMetadata.operation) }
            data.encodeFields(&frame)
        case .userMetadata(let data):
            frame.field(.result) { $0.writeString(GetUserMetadata.operation) }
            data.encodeFields(&frame)
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "ok" else { return nil }
        switch head.result {
        case GetChannelMetadata.operation?: return .channelMetadata(try Metadata.decode(head, &reader))
        case GetUserMetadata.operation?: return .userMetadata(try Metadata.decode(head, &reader))
        default: return nil
        }
    }
}

extension Metadata {
    func encodeFields(_ frame: inout FrameWriter) {
        frame.field(.majorRevision) { $0.writeInt(majorRevision) }
        frame.field(.items) { $0.writeMetadataItems(items) }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self {
        var majorRevision: Int64?
        var items: [MetadataItem]?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .majorRevision: majorRevision = try reader.readInteger(Int64.self)
            case .items: items = try reader.readMetadataItems()
            default: return false
            }
            return true
        }
        return Metadata(majorRevision: try head.required(majorRevision, .majorRevision), items: try head.required(items, .items))
    }
}

extension StorageEvent: PushFamily {
    var frameType: String { "storage" }

    func encodeFrame() -> [UInt8] {
        var frame = FrameWriter(type: frameType, id: nil, capacity: 64 + data.approximateSize + target.utf8.count)
        frame.field(.channelType) { $0.writeInt(Int64(channelType.rawValue)) }
        frame.field(.storageType) { $0.writeInt(Int64(storageType.rawValue)) }
        frame.field(.eventType) { $0.writeInt(Int64(eventType.rawValue)) }
        frame.field(.target) { $0.writeString(target) }
        data.encodeFields(&frame)
        frame.field(.timestamp) { $0.writeUInt(timestamp) }
        return frame.finish()
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "storage" else { return nil }
        var channelType: RtmChannelType?
        var storageType: RtmStorageType?
        var eventType: RtmStorageEventType?
        var target: String?
        var majorRevision: Int64?
        var items: [MetadataItem]?
        var timestamp: UInt64?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.named)
            case .storageType: storageType = try reader.readEnum(RtmStorageType.self)
            case .eventType: eventType = try reader.readEnum(RtmStorageEventType.self)
            case .target: target = try reader.readString()
            case .majorRevision: majorRevision = try reader.readInteger(Int64.self)
            case .items: items = try reader.readMetadataItems()
            case .timestamp: timestamp = try reader.readInteger(UInt64.self)
            default: return false
            }
            return true
        }
        return StorageEvent(
            channelType: try head.required(channelType, .channelType), storageType: try head.required(storageType, .storageType),
            eventType: try head.required(eventType, .eventType), target: try head.required(target, .target),
            data: Metadata(majorRevision: try head.required(majorRevision, .majorRevision), items: try head.required(items, .items)),
            timestamp: try head.required(timestamp, .timestamp))
    }
}

extension MessagePackWriter {
    /// Writes metadata items as an array of maps; fields at their defaults are left out.
    mutating func writeMetadataItems(_ items: [MetadataItem]) {
        writeArrayHeader(items.count)
        for item in items {
            var fields: [(FrameKey, (inout MessagePackWriter) -> Void)] = [(.key, { $0.writeString(item.key) })]
            if !item.value.isEmpty { fields.append((.value, { $0.writeString(item.value) })) }
            if item.revision != -1 { fields.append((.revision, { $0.writeInt(item.revision) })) }
            if item.updateTs != 0 { fields.append((.updateTs, { $0.writeUInt(item.updateTs) })) }
            if !item.authorUserId.isEmpty { fields.append((.authorUserId, { $0.writeString(item.authorUserId) })) }
            switch item.lease {
            case .timeToLive(let milliseconds)?: fields.append((.ttl, { $0.writeUInt(milliseconds) }))
            case .session?: fields.append((.sessionLease, { $0.writeBool(true) }))
            case nil: break
            }
            if let expiresAt = item.expiresAt { fields.append((.expiresAt, { $0.writeUInt(expiresAt) })) }
            if item.sessionBound { fields.append((.sessionBound, { $0.writeBool(true) })) }
            writeMapHeader(fields.count)
            for (key, write) in fields {
                writeKey(key)
                write(&self)
            }
        }
    }
}

extension MessagePackReader {
    /// Reads an array of metadata item maps; `key` is required, the rest default.
    mutating func readMetadataItems() throws(WireError) -> [MetadataItem] {
        let count = try readArrayHeader()
        var items: [MetadataItem] = []
        items.reserveCapacity(min(count, 256))
        for _ in 0..<count {
            let start = offset
            let fields = try readMapHeader()
            var key: String?
            var item = MetadataItem(key: "")
            for _ in 0..<fields {
                switch try readFrameKey() {
                case .key?: key = try readString()
                case .value?: item.value = try readString()
                case .revision?: item.revision = try readInteger(Int64.self)
                case .updateTs?: item.updateTs = try readInteger(UInt64.self)
                case .authorUserId?: item.authorUserId = try readString()
                case .ttl?: item.lease = .timeToLive(milliseconds: try readInteger(UInt64.self))
                case .sessionLease?: if try readBool() { item.lease = .session }
                case .expiresAt?: item.expiresAt = try readInteger(UInt64.self)
                case .sessionBound?: item.sessionBound = try readBool()
                default: try skipValue()
                }
            }
            guard let key else { throw WireError(.invalidValue("a metadata item needs a key"), offset: start) }
            item.key = key
            items.append(item)
        }
        return items
    }
}

extension ClientFrame {
    /// A storage request.
    public static func storage(id: UInt32, _ operation: StorageOperation) -> ClientFrame {
        ClientFrame(id: id, .storage(operation))
    }
}

extension ServerFrame {
    /// The storage event this frame pushes, if it is one.
    public var storageEvent: StorageEvent? {
        if case .push(.storage(let event)) = self { event } else { nil }
    }
    /// The metadata this answer carries, if it answers a `get`.
    public var metadata: Metadata? {
        switch self {
        case .answer(_, .storage(.channelMetadata(let data))), .answer(_, .storage(.userMetadata(let data))): data
        default: nil
        }
    }
}

extension StorageOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        .storage
    }
}
