import SwitchboardCore
import SwitchboardWire

/// The fields of a message between nodes that every relayed message carries, in this order:
/// topic, payload (a string or binary), publisher, customType, timestamp. Written and read once
/// here for the cluster link's envelopes and the topic store's messages.
public enum DeliveryFields {
    /// Writes `delivery`'s fields (its channel type and name are the caller's to write).
    public static func write(_ delivery: MessageDelivery, into writer: inout MessagePackWriter) {
        writer.writeString(delivery.channelTopic)
        switch delivery.payload {
        case .string(let text): writer.writeString(text)
        case .binary(let bytes): writer.writeBinary(bytes)
        }
        writer.writeString(delivery.publisher)
        writer.writeString(delivery.customType)
        writer.writeUInt(delivery.timestamp)
    }

    /// Reads the fields `write` wrote, as a delivery on `channelType` channel `channelName`.
    public static func read<Bytes>(
        from reader: inout MessagePackReader<Bytes>, channelType: RtmChannelType, channelName: String
    ) throws(WireError) -> MessageDelivery {
        let topic = try reader.readString()
        let payload: MessagePayload =
            try reader.peekType() == .binary ? .binary(try reader.readBinary()) : .string(try reader.readString())
        let publisher = try reader.readString()
        let customType = try reader.readString()
        let timestamp = try reader.readInteger(UInt64.self)
        return MessageDelivery(
            channelType: channelType, channelName: channelName, channelTopic: topic, payload: payload, publisher: publisher,
            customType: customType, timestamp: timestamp)
    }
}
