import SwitchboardCore
import SwitchboardWire

/// A message as it travels between nodes: the node that accepted it, whose listeners get it, and
/// the delivery itself, in MessagePack.
struct RelayEnvelope: Sendable, Hashable {
    /// The version of this layout; a node skips envelopes of another.
    static let version = 1

    /// The node that accepted the message (it delivered to its own listeners already).
    var origin: String
    /// Whose listeners get it.
    var target: RelayTarget
    /// The message as receivers get it.
    var delivery: MessageDelivery

    /// The envelope as bytes.
    func encoded() -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: 96 + delivery.approximateSize)
        writer.writeArrayHeader(12)
        writer.writeInteger(Self.version)
        writer.writeString(origin)
        switch target {
        case .channel(let channel):
            writer.writeInteger(0)
            writer.writeString(channel.app)
            writer.writeString(channel.name)
        case .user(let user):
            writer.writeInteger(1)
            writer.writeString(user.app)
            writer.writeString(user.userId)
        }
        writer.writeInteger(delivery.channelType.rawValue)
        writer.writeString(delivery.channelName)
        DeliveryFields.write(delivery, into: &writer)
        return writer.bytes
    }

    /// Reads an envelope; throws on bytes of another layout or version.
    init(decoding bytes: [UInt8]) throws(WireError) {
        var reader = MessagePackReader(bytes)
        guard try reader.readArrayHeader() == 12, try reader.readInteger(Int.self) == Self.version else {
            throw WireError(.invalidValue("not a relay envelope of version \(Self.version)"), offset: reader.offset)
        }
        origin = try reader.readString()
        let kind = try reader.readInteger(Int.self)
        let app = try reader.readString()
        let name = try reader.readString()
        switch kind {
        case 0: target = .channel(ChannelKey(app: app, .message, name))
        case 1: target = .user(UserKey(app, name))
        default: throw WireError(.invalidValue("relay target kind \(kind)"), offset: reader.offset)
        }
        guard let channelType = RtmChannelType(rawValue: try reader.readInteger(Int.self)) else {
            throw WireError(.invalidValue("channel type"), offset: reader.offset)
        }
        let channelName = try reader.readString()
        delivery = try DeliveryFields.read(from: &reader, channelType: channelType, channelName: channelName)
        guard reader.isAtEnd else { throw WireError(.trailingBytes(reader.remaining), offset: reader.offset) }
    }

    /// An envelope of `delivery` for `target`'s listeners, accepted by `origin`.
    init(origin: String, target: RelayTarget, delivery: MessageDelivery) {
        self.origin = origin
        self.target = target
        self.delivery = delivery
    }
}
