import SwitchboardCore

/// The stream-channel feature's requests: join, leave and token renewal of a stream channel;
/// joining, leaving, publishing in and subscribing to its topics.
public enum StreamOperation: ClientOperationFamily {
    /// The channel it is about (for logs).
    public var channelName: String? {
        switch self {
        case .join(let channel, _, _), .leave(let channel), .renewChannelToken(let channel, _), .joinTopic(let channel, _, _),
            .leaveTopic(let channel, _), .publishTopicMessage(let channel, _, _, _, _), .subscribeTopic(let channel, _, _),
            .unsubscribeTopic(let channel, _, _):
            channel
        }
    }

    /// Join a stream channel.
    case join(channel: String, token: String, features: RtmJoinChannelFeature)
    /// Leave a stream channel.
    case leave(channel: String)
    /// Replace a joined stream channel's RTC token (`RtmStreamChannel.renewToken`; named apart
    /// from the session's `renewToken`).
    case renewChannelToken(channel: String, token: String)
    /// Become a publisher of a topic.
    case joinTopic(channel: String, topic: String, options: TopicJoinOptions)
    /// Stop publishing in a topic.
    case leaveTopic(channel: String, topic: String)
    /// Publish in a joined topic.
    case publishTopicMessage(channel: String, topic: String, message: MessagePayload, customType: String, sendTs: UInt64)
    /// Subscribe to publishers of a topic (nil: the current ones).
    case subscribeTopic(channel: String, topic: String, users: [UserID]?)
    /// Unsubscribe from publishers of a topic (nil: all).
    case unsubscribeTopic(channel: String, topic: String, users: [UserID]?)

    /// The reference operation it carries out.
    public var reference: OperationName.Stream {
        switch self {
        case .join: .join
        case .leave: .leave
        case .renewChannelToken: .renewToken
        case .joinTopic: .joinTopic
        case .leaveTopic: .leaveTopic
        case .publishTopicMessage: .publishTopicMessage
        case .subscribeTopic: .subscribeTopic
        case .unsubscribeTopic: .unsubscribeTopic
        }
    }

    public var name: String { Self.wireNames.name(of: reference) }

    /// Topic messages first: they are nearly every frame of the feature. The stream channel's
    /// `renewToken` is `renewChannelToken` on the wire, apart from the session's.
    static let wireNames = WireOperationNames<OperationName.Stream>(
        [.publishTopicMessage, .join, .leave, .renewToken, .joinTopic, .leaveTopic, .subscribeTopic, .unsubscribeTopic],
        renamed: [.renewToken: "renewChannelToken"])

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard let type = wireNames.operation(named: head.type) else { return nil }
        var channel: String?
        var token: String?
        var features: UInt32?
        var topic: String?
        var options = TopicJoinOptions()
        var message: MessagePayload?
        var customType = ""
        var sendTs: UInt64 = 0
        var users: [UserID]?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channel: channel = try reader.readString()
            case .token where type == .join || type == .renewToken: token = try reader.readString()
            case .features where type == .join: features = try reader.readInteger(UInt32.self)
            case .topic: topic = try reader.readString()
            case .qos where type == .joinTopic: options.qos = try reader.readEnum(RtmMessageQos.self)
            case .priority where type == .joinTopic: options.priority = try reader.readEnum(RtmMessagePriority.self)
            case .meta where type == .joinTopic: options.meta = try reader.readString()
            case .syncWithMedia where type == .joinTopic: options.syncWithMedia = try reader.readBool()
            case .message where type == .publishTopicMessage: message = try reader.readPayload()
            case .customType where type == .publishTopicMessage: customType = try reader.readString()
            case .sendTs where type == .publishTopicMessage: sendTs = try reader.readInteger(UInt64.self)
            case .users where type == .subscribeTopic || type == .unsubscribeTopic: users = try reader.readStrings()
            default: return false
            }
            return true
        }
        let name = try head.required(channel, .channel)
        switch type {
        case .join:
            return .join(
                channel: name, token: token ?? "",
                features: RtmJoinChannelFeature(rawValue: try head.required(features, .features)))
        case .leave: return .leave(channel: name)
        case .renewToken: return .renewChannelToken(channel: name, token: try head.required(token, .token))
        default: break
        }
        let topicName = try head.required(topic, .topic)
        switch type {
        case .joinTopic: return .joinTopic(channel: name, topic: topicName, options: options)
        case .leaveTopic: return .leaveTopic(channel: name, topic: topicName)
        case .publishTopicMessage:
            return .publishTopicMessage(
                channel: name, topic: topicName, message: try head.required(message, .message), customType: customType,
                sendTs: sendTs)
        case .subscribeTopic: return .subscribeTopic(channel: name, topic: topicName, users: users)
        default: return .unsubscribeTopic(channel: name, topic: topicName, users: users)
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .join(let channel, let token, let features):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.token) { $0.writeString(token) }
            frame.field(.features) { $0.writeUInt(UInt64(features.rawValue)) }
        case .leave(let channel):
            frame.field(.channel) { $0.writeString(channel) }
        case .renewChannelToken(let channel, let token):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.token) { $0.writeString(token) }
        case .joinTopic(let channel, let topic, let options):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.topic) { $0.writeString(topic) }
            frame.field(.qos) { $0.writeCount(options.qos.rawValue) }
            frame.field(.priority) { $0.writeCount(options.priority.rawValue) }
            frame.field(.meta) { $0.writeString(options.meta) }
            frame.field(.syncWithMedia) { $0.writeBool(options.syncWithMedia) }
        case .leaveTopic(let channel, let topic):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.topic) { $0.writeString(topic) }
        case .publishTopicMessage(let channel, let topic, let message, let customType, let sendTs):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.topic) { $0.writeString(topic) }
            frame.field(.message) { $0.writePayload(message) }
            if !customType.isEmpty { frame.field(.customType) { $0.writeString(customType) } }
            if sendTs != 0 { frame.field(.sendTs) { $0.writeUInt(sendTs) } }
        case .subscribeTopic(let channel, let topic, let users), .unsubscribeTopic(let channel, let topic, let users):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.topic) { $0.writeString(topic) }
            if let users { frame.field(.users) { $0.writeStrings(users) } }
        }
    }
}

/// The stream-channel feature's answers that carry data.
public enum StreamAnswer: AnswerFamily {
    /// The result of `subscribeTopic` (`{"t":"ok","result":"subscribeTopic",…}`).
    case subscribeTopic(TopicSubscription)

    var frameType: String { "ok" }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .subscribeTopic(let subscription):
            frame.field(.result) { $0.writeString(StreamOperation.wireNames.name(of: .subscribeTopic)) }
            frame.field(.succeedUsers) { $0.writeStrings(subscription.succeedUsers) }
            frame.field(.failedUsers) { $0.writeStrings(subscription.failedUsers) }
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "ok", let result = head.result, StreamOperation.wireNames.operation(named: result) == .subscribeTopic
        else { return nil }
        var succeeded: [UserID]?
        var failed: [UserID]?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .succeedUsers: succeeded = try reader.readStrings()
            case .failedUsers: failed = try reader.readStrings()
            default: return false
            }
            return true
        }
        return .subscribeTopic(
            TopicSubscription(
                succeedUsers: try head.required(succeeded, .succeedUsers), failedUsers: try head.required(failed, .failedUsers)))
    }
}

extension TopicEvent: PushFamily {
    var frameType: String { "topic" }

    func encodeFrame() -> [UInt8] {
        var frame = FrameWriter(type: frameType, id: nil, capacity: approximateSize + 96)
        frame.field(.eventType) { $0.writeCount(type.rawValue) }
        frame.field(.channel) { $0.writeString(channelName) }
        frame.field(.publisher) { $0.writeString(publisher) }
        frame.field(.topicInfos) { writer in
            writer.writeArrayHeader(topicInfos.count)
            for info in topicInfos {
                writer.writeMapHeader(2)
                writer.writeKey(.topic); writer.writeString(info.topic)
                writer.writeKey(.publishers); writer.writeArrayHeader(info.publishers.count)
                for publisher in info.publishers {
                    writer.writeMapHeader(2)
                    writer.writeKey(.userId); writer.writeString(publisher.userId)
                    writer.writeKey(.meta); writer.writeString(publisher.meta)
                }
            }
        }
        frame.field(.timestamp) { $0.writeUInt(timestamp) }
        if more { frame.field(.more) { $0.writeBool(true) } }
        return frame.finish()
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "topic" else { return nil }
        var type: RtmTopicEventType?
        var channel: String?
        var publisher = ""
        var infos: [TopicInfo] = []
        var timestamp: UInt64?
        var more = false
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .eventType: type = try reader.readEnum(RtmTopicEventType.self)
            case .channel: channel = try reader.readString()
            case .publisher: publisher = try reader.readString()
            case .topicInfos: infos = try reader.readTopicInfos()
            case .timestamp: timestamp = try reader.readInteger(UInt64.self)
            case .more: more = try reader.readBool()
            default: return false
            }
            return true
        }
        return TopicEvent(
            type: try head.required(type, .eventType), channelName: try head.required(channel, .channel),
            publisher: publisher, topicInfos: infos, timestamp: try head.required(timestamp, .timestamp), more: more)
    }
}

extension MessagePackReader {
    /// Reads an integer that must be a raw value of `E`.
    mutating func readEnum<E: RawRepresentable>(_: E.Type) throws(WireError) -> E where E.RawValue == Int {
        let start = offset
        let raw = try readInteger(Int.self)
        guard let value = E(rawValue: raw) else {
            throw WireError(.invalidValue("\(raw) is not a valid \(E.self)"), offset: start)
        }
        return value
    }

    /// Reads `topicInfos`: an array of `{topic, publishers: [{userId, meta}]}`.
    mutating func readTopicInfos() throws(WireError) -> [TopicInfo] {
        let count = try readArrayHeader()
        var infos: [TopicInfo] = []
        for _ in 0..<count {
            let start = offset
            var topic: String?
            var publishers: [TopicPublisher] = []
            for _ in 0..<(try readMapHeader()) {
                switch try readFrameKey() {
                case .topic?: topic = try readString()
                case .publishers?:
                    for _ in 0..<(try readArrayHeader()) { publishers.append(try readTopicPublisher()) }
                default: try skipValue()
                }
            }
            guard let topic else { throw WireError(.invalidValue("a topic info needs topic"), offset: start) }
            infos.append(TopicInfo(topic: topic, publishers: publishers))
        }
        return infos
    }

    private mutating func readTopicPublisher() throws(WireError) -> TopicPublisher {
        let start = offset
        var userId: String?
        var meta = ""
        for _ in 0..<(try readMapHeader()) {
            switch try readFrameKey() {
            case .userId?: userId = try readString()
            case .meta?: meta = try readString()
            default: try skipValue()
            }
        }
        guard let userId else { throw WireError(.invalidValue("a publisher needs userId"), offset: start) }
        return TopicPublisher(userId: userId, meta: meta)
    }
}

extension ClientFrame {
    /// A stream-channel request.
    public static func stream(id: UInt32, _ operation: StreamOperation) -> ClientFrame {
        ClientFrame(id: id, .stream(operation))
    }
}

extension ServerFrame {
    /// The answer to `subscribeTopic`.
    public static func subscribeTopicOk(id: UInt32, _ subscription: TopicSubscription) -> ServerFrame {
        .answer(id: id, .stream(.subscribeTopic(subscription)))
    }
    /// The topic subscription this frame answers with, if it is one.
    public var topicSubscription: TopicSubscription? {
        if case .answer(_, .stream(.subscribeTopic(let subscription))) = self { subscription } else { nil }
    }
    /// The topic event this frame pushes, if it is one.
    public var topicEvent: TopicEvent? {
        if case .push(.topic(let event)) = self { event } else { nil }
    }
}

extension StreamOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        switch self {
        case .publishTopicMessage: nil
        default: .other
        }
    }
}
