import SwitchboardCore

/// The message-channel feature's requests: subscribe, unsubscribe, publish (to a message
/// channel or to a user).
public enum ChannelOperation: ClientOperationFamily {
    /// The channel it is about (for logs).
    public var channelName: String? {
        switch self {
        case .subscribe(let channel, _), .unsubscribe(let channel), .publish(_, let channel, _, _): channel
        }
    }

    /// Subscribe to a message channel.
    case subscribe(channel: String, features: RtmSubscribeChannelFeature)
    /// Unsubscribe from a message channel.
    case unsubscribe(channel: String)
    /// Publish to a message channel (`.message`) or send to a user (`.user`).
    case publish(channelType: RtmChannelType, channel: String, message: MessagePayload, customType: String)

    /// The reference operation it carries out, whose name is its `"t"`.
    public var reference: OperationName.Messages {
        switch self {
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .publish: .publish
        }
    }

    public var name: String { Self.wireNames.name(of: reference) }

    /// Publishing first: it is nearly every frame.
    static let wireNames = WireOperationNames<OperationName.Messages>([.publish, .subscribe, .unsubscribe])

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        // Which operation the frame names, read once from its type, so that its fields are told
        // apart without comparing strings again.
        guard let kind = wireNames.operation(named: head.type) else { return nil }
        var channel: String?
        var features: UInt32?
        var channelType: RtmChannelType?
        var message: MessagePayload?
        var customType: String?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channel: channel = try reader.readString()
            case .features where kind == .subscribe: features = try reader.readInteger(UInt32.self)
            case .channelType where kind == .publish:
                channelType = try reader.readChannelType(allowed: ChannelTypes.publishable)
            case .message where kind == .publish: message = try reader.readPayload()
            case .customType where kind == .publish: customType = try reader.readString()
            default: return false
            }
            return true
        }
        // Values are taken out of the variables the reading closure filled, not copied.
        let name = try head.required(channel.take(), .channel)
        switch kind {
        case .subscribe:
            return .subscribe(
                channel: name, features: RtmSubscribeChannelFeature(rawValue: try head.required(features, .features)))
        case .unsubscribe:
            return .unsubscribe(channel: name)
        case .publish:
            return .publish(
                channelType: try head.required(channelType, .channelType), channel: name,
                message: try head.required(message.take(), .message), customType: customType.take() ?? "")
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .subscribe(let channel, let features):
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.features) { $0.writeUInt(UInt64(features.rawValue)) }
        case .unsubscribe(let channel):
            frame.field(.channel) { $0.writeString(channel) }
        case .publish(let channelType, let channel, let message, let customType):
            frame.field(.channelType) { $0.writeInt(Int64(channelType.rawValue)) }
            frame.field(.channel) { $0.writeString(channel) }
            frame.field(.message) { $0.writePayload(message) }
            if !customType.isEmpty { frame.field(.customType) { $0.writeString(customType) } }
        }
    }
}

extension MessageDelivery: PushFamily, MessagePushFields {
    var payloadSize: Int {
        switch payload {
        case .string(let text): MessagePackSize.string(utf8Count: text.utf8.count)
        case .binary(let bytes): MessagePackSize.binary(count: bytes.count)
        }
    }
    var customTypeSize: Int { MessagePackSize.string(utf8Count: customType.utf8.count) }
    func writePayload<Output: MessagePackOutput>(into writer: inout Output) { writer.writePayload(payload) }
    func writeCustomType<Output: MessagePackOutput>(into writer: inout Output) { writer.writeString(customType) }

    var frameType: String { Self.type }

    func encodeFrame() -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: encodedSize)
        encodeFrame(into: &writer)
        return writer.bytes
    }

    static var type: String { "message" }
    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == type else { return nil }
        var channelType: RtmChannelType?
        var channel: String?
        var topic = ""
        var message: MessagePayload?
        var publisher: String?
        var customType = ""
        var timestamp: UInt64?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.named)
            case .channel: channel = try reader.readString()
            case .topic: topic = try reader.readString()
            case .message: message = try reader.readPayload()
            case .publisher: publisher = try reader.readString()
            case .customType: customType = try reader.readString()
            case .timestamp: timestamp = try reader.readInteger(UInt64.self)
            default: return false
            }
            return true
        }
        return MessageDelivery(
            channelType: try head.required(channelType, .channelType), channelName: try head.required(channel, .channel),
            channelTopic: topic, payload: try head.required(message, .message),
            publisher: try head.required(publisher, .publisher), customType: customType,
            timestamp: try head.required(timestamp, .timestamp))
    }
}

extension ClientFrame {
    /// A `subscribe` request.
    public static func subscribe(id: UInt32, channel: String, features: RtmSubscribeChannelFeature) -> ClientFrame {
        ClientFrame(id: id, .channel(.subscribe(channel: channel, features: features)))
    }
    /// An `unsubscribe` request.
    public static func unsubscribe(id: UInt32, channel: String) -> ClientFrame {
        ClientFrame(id: id, .channel(.unsubscribe(channel: channel)))
    }
    /// A `publish` request.
    public static func publish(
        id: UInt32, channelType: RtmChannelType, channel: String, message: MessagePayload, customType: String = ""
    ) -> ClientFrame {
        ClientFrame(id: id, .channel(.publish(channelType: channelType, channel: channel, message: message, customType: customType)))
    }
}

extension ServerFrame {
    /// A message push.
    public static func message(_ delivery: MessageDelivery) -> ServerFrame { .push(.message(delivery)) }
    /// The message this frame pushes, if it is one.
    public var deliveredMessage: MessageDelivery? {
        if case .push(.message(let delivery)) = self { delivery } else { nil }
    }
}

extension ChannelOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        switch self {
        case .subscribe, .unsubscribe: .other
        case .publish: .publish
        }
    }
}
