import SwitchboardCore

/// A family of pushes as one feature defines them (the payload types live in Core, where the
/// modules that send them see them).
protocol PushFamily: Sendable {
    /// The `"t"` value.
    var frameType: String { get }
    /// The whole push frame, encoded in one pass into one buffer.
    func encodeFrame() -> [UInt8]
    /// Decodes the push if `head.type` is this family's.
    static func decode<Bytes>(_ head: FrameHead, _ fields: inout MessagePackReader<Bytes>) throws(WireError) -> Self?
}

extension Wire {
    /// Encodes a push once, so the same bytes can go to every receiver. Equal to
    /// `ServerFrame.push(push).encode()`.
    public static func encodePush(_ push: Push) -> [UInt8] {
        switch push {
        case .message(let delivery): delivery.encodeFrame()
        case .session(let push): push.encodeFrame()
        case .storage(let event): event.encodeFrame()
        case .extension(let push): push.encodeFrame()
        case .topic(let event): event.encodeFrame()
        case .presence(let event): event.encodeFrame()
        case .lock(let push): push.encodeFrame()
        }
    }

    /// The bytes `encodePush(_:into:)` writes for `push`, exactly, for the pushes it can encode
    /// into memory sized beforehand (messages, the push of every publish); nil for the others.
    public static func encodedSize(of push: Push) -> Int? {
        if case .message(let delivery) = push { delivery.encodedSize } else { nil }
    }

    /// Encodes `push` into `buffer`, which has room for `encodedSize(of: push)` bytes, and
    /// returns how many it wrote (that many). Equal to `encodePush(push)`.
    public static func encodePush(_ push: Push, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard case .message(let delivery) = push else {
            preconditionFailure("only a push with an encodedSize is encoded into a buffer")
        }
        var writer = MessagePackBufferWriter(buffer)
        delivery.encodeFrame(into: &writer)
        return writer.count
    }

    /// The `"t"` value of a push.
    static func pushType(_ push: Push) -> String {
        switch push {
        case .message(let delivery): delivery.frameType
        case .session(let push): push.frameType
        case .storage(let event): event.frameType
        case .extension(let push): push.frameType
        case .topic(let event): event.frameType
        case .presence(let event): event.frameType
        case .lock(let push): push.frameType
        }
    }

    /// Decodes a push; nil when no feature knows its type.
    static func decodePush<Bytes>(_ head: FrameHead, _ fields: inout MessagePackReader<Bytes>) throws(WireError) -> Push? {
        if let delivery = try MessageDelivery.decode(head, &fields) { return .message(delivery) }
        if let push = try SessionPush.decode(head, &fields) { return .session(push) }
        if let event = try StorageEvent.decode(head, &fields) { return .storage(event) }
        if let push = try ExtensionPush.decode(head, &fields) { return .extension(push) }
        if let event = try TopicEvent.decode(head, &fields) { return .topic(event) }
        if let event = try PresenceDelivery.decode(head, &fields) { return .presence(event) }
        if let push = try LockPush.decode(head, &fields) { return .lock(push) }
        return nil
    }
}
