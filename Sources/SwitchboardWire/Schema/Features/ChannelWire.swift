import SwitchboardCore

/// The message-channel feature's requests: subscribe, unsubscribe, publish (to a message
/// channel or to a user).
public enum ChannelOperation: ClientOperationFamily {
    /// Subscribe to a message channel.
    case subscribe(channel: String, features: RtmSubscribeChannelFeature)
    /// Unsubscribe from a message channel.
    case unsubscribe(channel: String)
    /// Publish to a message channel (`.message`) or send to a user (`.user`).
    case publish(channelType: RtmChannelType, channel: String, message: MessagePayload, customType: String)

    public var name: String {
        switch self {
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .publish: "publish"
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        var channel: String?
        var features: UInt32?
        var channelType: RtmChannelType?
        var message: MessagePayload?
        var customType = ""
        let type = head.type
        guard type == "subscribe" || type == "unsubscribe" || type == "publish" else { return nil }
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channel: channel = try reader.readString()
            case .features where type == "subscribe": features = try reader.readInteger(UInt32.self)
            case .channelType where type == "publish":
                channelType = try reader.readChannelType(allowed: ChannelTypes.publishable)
            case .message where type == "publish": message = try reader.readPayload()
            case .customType where type == "publish": customType = try reader.readString()
            default: return false
            }
            return true
        }
        let name = try head.required(channel, .channel)
        switch type {
        case "subscribe":
            return .subscribe(
                channel: name, features: RtmSubscribeChannelFeature(rawValue: try head.required(features, .features)))
        case "unsubscribe":
            return .unsubscribe(channel: name)
        default:
            return .publish(
                channelType: try head.required(channelType, .channelType), channel: name,
                message: try head.required(message, .message), customType: customType)
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

extension MessageDelivery: PushFamily {
    var frameType: String { Self.type }
    private static let type = "message"

    func encodeFrame() -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: encodedSize)
        encodeFrame(into: &writer)
        return writer.bytes
    }

    /// The bytes `encodeFrame(into:)` writes, exactly: a push kept for a resume holds no slack.
    var encodedSize: Int {
        func string(_ value: String) -> Int { MessagePackSize.string(utf8Count: value.utf8.count) }
        let body = switch payload {
        case .string(let text): string(text)
        case .binary(let bytes): MessagePackSize.binary(count: bytes.count)
        }
        return Self.encodedSizeOfFixedParts + MessagePackSize.uint(UInt64(channelType.rawValue)) + string(channelName)
            + string(channelTopic) + body + string(publisher) + string(customType) + MessagePackSize.uint(timestamp)
    }

    /// What every message frame has: the map header, the eight keys and the `"t"` value.
    private static let encodedSizeOfFixedParts: Int = {
        let keys: [FrameKey] = [.t, .channelType, .channel, .topic, .message, .publisher, .customType, .timestamp]
        return MessagePackSize.mapHeader(keys.count) + MessagePackSize.string(utf8Count: type.utf8.count)
            + keys.reduce(0) { $0 + MessagePackSize.string(utf8Count: $1.rawValue.utf8.count) }
    }()

    /// Encoded in one pass: this runs once per publish, usually straight into the frame's memory.
    func encodeFrame<Output: MessagePackOutput>(into writer: inout Output) {
        writer.writeMapHeader(8)
        writer.writeKey(.t); writer.writeString(frameType)
        writer.writeKey(.channelType); writer.writeInt(Int64(channelType.rawValue))
        writer.writeKey(.channel); writer.writeString(channelName)
        writer.writeKey(.topic); writer.writeString(channelTopic)
        writer.writeKey(.message); writer.writePayload(payload)
        writer.writeKey(.publisher); writer.writeString(publisher)
        writer.writeKey(.customType); writer.writeString(customType)
        writer.writeKey(.timestamp); writer.writeUInt(timestamp)
    }

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
