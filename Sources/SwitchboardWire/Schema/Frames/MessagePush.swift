import SwitchboardCore

/// What a message push is written from: a `MessageDelivery`, which owns its values, or a
/// `LentMessage`, whose body and custom type are a received frame's bytes. One encoder for both,
/// so a push written from a publish read in place is the push any other path writes.
protocol MessagePushFields {
    var channelType: RtmChannelType { get }
    var channelName: String { get }
    var channelTopic: String { get }
    var publisher: String { get }
    var timestamp: UInt64 { get }
    /// The encoded size of the body.
    var payloadSize: Int { get }
    /// The encoded size of the custom type.
    var customTypeSize: Int { get }
    /// Writes the body: a string as str, bytes as bin.
    func writePayload<Output: MessagePackOutput>(into writer: inout Output)
    /// Writes the custom type as a string.
    func writeCustomType<Output: MessagePackOutput>(into writer: inout Output)
}

extension MessagePushFields {
    /// Whether the push carries its topic: left out when empty.
    private var hasTopic: Bool { !channelTopic.isEmpty }
    /// Whether the push carries its custom type: left out when empty (its encoded size is then
    /// 1, the string's header alone).
    private var hasCustomType: Bool { customTypeSize > 1 }

    /// The bytes `encodeFrame(into:)` writes, exactly: a push kept for a resume holds no slack.
    var encodedSize: Int {
        func string(_ value: String) -> Int { MessagePackSize.string(utf8Count: value.utf8.count) }
        // Through the global in place, as `encodeFrame` reads it: a copy would count references.
        var size = 1 + MessagePushKeys.shared.always + MessagePackSize.uint(UInt64(channelType.rawValue)) + string(channelName)
            + payloadSize + string(publisher) + MessagePackSize.uint(timestamp)
        if hasTopic { size += MessagePushKeys.shared.topicSize + string(channelTopic) }
        if hasCustomType { size += MessagePushKeys.shared.customTypeSize + customTypeSize }
        return size
    }

    /// Encoded in one pass: this runs once per publish, usually straight into the frame's memory.
    /// An empty topic and an empty custom type are left out (docs/PROTOCOL.md §4.4: absent means
    /// `""`), so a push outside stream channels without a custom type is 19 bytes shorter.
    func encodeFrame<Output: MessagePackOutput>(into writer: inout Output) {
        let (hasTopic, hasCustomType) = (hasTopic, hasCustomType)
        writer.writeMapHeader(6 + (hasTopic ? 1 : 0) + (hasCustomType ? 1 : 0))
        // Through the global in place: a copy of the keys would count references to their array.
        let ends = MessagePushKeys.shared.ends
        MessagePushKeys.shared.bytes.withUnsafeBytes { keys in
            func key(_ range: Range<Int>) { writer.append(contentsOf: UnsafeRawBufferPointer(rebasing: keys[range])) }
            key(0..<ends.0); writer.writeInt(Int64(channelType.rawValue))
            key(ends.0..<ends.1); writer.writeString(channelName)
            if hasTopic { key(ends.1..<ends.2); writer.writeString(channelTopic) }
            key(ends.2..<ends.3); writePayload(into: &writer)
            key(ends.3..<ends.4); writer.writeString(publisher)
            if hasCustomType { key(ends.4..<ends.5); writeCustomType(into: &writer) }
            key(ends.5..<ends.6); writer.writeUInt(timestamp)
        }
    }
}

/// What every message frame has, encoded once: `"t": "message"` and each key, so a frame is its
/// map header and its values written between these.
struct MessagePushKeys: Sendable {
    /// The fixed parts, one after another.
    let bytes: [UInt8]
    /// Where each part ends in `bytes`: before the channel type, the channel, the topic, the
    /// message, the publisher, the custom type and the timestamp.
    let ends: (Int, Int, Int, Int, Int, Int, Int)
    /// The bytes of the parts every push has (all but the topic's and the custom type's keys).
    let always: Int
    /// The bytes of the topic's key and of the custom type's.
    let topicSize: Int
    let customTypeSize: Int

    static let shared = MessagePushKeys()

    private init() {
        var writer = MessagePackWriter()
        var ends: [Int] = []
        writer.writeKey(.t)
        writer.writeString(MessageDelivery.type)
        for key: FrameKey in [.channelType, .channel, .topic, .message, .publisher, .customType, .timestamp] {
            writer.writeKey(key)
            ends.append(writer.bytes.count)
        }
        bytes = writer.bytes
        self.ends = (ends[0], ends[1], ends[2], ends[3], ends[4], ends[5], ends[6])
        topicSize = ends[2] - ends[1]
        customTypeSize = ends[5] - ends[4]
        always = ends[6] - topicSize - customTypeSize
    }
}

extension LentMessage: MessagePushFields {
    var channelTopic: String { "" }
    var payloadSize: Int { payloadIsString ? MessagePackSize.string(utf8Count: payload.count) : MessagePackSize.binary(count: payload.count) }
    var customTypeSize: Int { MessagePackSize.string(utf8Count: customType.count) }
    func writePayload<Output: MessagePackOutput>(into writer: inout Output) {
        if payloadIsString { writer.writeString(utf8: payload) } else { writer.writeBinary(payload) }
    }
    func writeCustomType<Output: MessagePackOutput>(into writer: inout Output) { writer.writeString(utf8: customType) }
}

extension Wire {
    /// The bytes `encodePush(_:into:)` writes for `message`, exactly.
    public static func encodedSize(of message: LentMessage) -> Int { message.encodedSize }

    /// Encodes the push of `message` into `buffer`, which has room for `encodedSize(of:)` bytes,
    /// and returns how many it wrote: the bytes `encodePush(.message(message.owned()))` makes.
    public static func encodePush(_ message: LentMessage, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = MessagePackBufferWriter(buffer)
        message.encodeFrame(into: &writer)
        return writer.count
    }
}
