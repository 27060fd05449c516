import SwitchboardCore

extension Wire {
    /// Encodes a push once, in a single pass into one buffer, so the same bytes can go to every
    /// receiver. Equal to `ServerFrame(push).encode()`.
    public static func encodePush(_ push: Push) -> [UInt8] {
        switch push {
        case .message(let delivery): encodeMessage(delivery)
        case .tokenPrivilegeWillExpire(let secondsLeft): encodeTokenWarning(secondsLeft: secondsLeft)
        }
    }

    static func encodeMessage(_ delivery: MessageDelivery) -> [UInt8] {
        let capacity =
            128 + delivery.payload.byteCount + delivery.channelName.utf8.count
            + delivery.channelTopic.utf8.count + delivery.publisher.utf8.count
            + delivery.customType.utf8.count
        var writer = MessagePackWriter(reservingCapacity: capacity)
        writer.writeMapHeader(8)
        writer.writeKey(.t); writer.writeString(ServerFrameType.message.rawValue)
        writer.writeKey(.channelType); writer.writeInt(Int64(delivery.channelType.rawValue))
        writer.writeKey(.channel); writer.writeString(delivery.channelName)
        writer.writeKey(.topic); writer.writeString(delivery.channelTopic)
        writer.writeKey(.message); writer.writePayload(delivery.payload)
        writer.writeKey(.publisher); writer.writeString(delivery.publisher)
        writer.writeKey(.customType); writer.writeString(delivery.customType)
        writer.writeKey(.timestamp); writer.writeUInt(delivery.timestamp)
        return writer.bytes
    }

    static func encodeTokenWarning(secondsLeft: Int) -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: 48)
        writer.writeMapHeader(2)
        writer.writeKey(.t); writer.writeString(ServerFrameType.tokenPrivilegeWillExpire.rawValue)
        writer.writeKey(.secondsLeft); writer.writeCount(secondsLeft)
        return writer.bytes
    }
}
