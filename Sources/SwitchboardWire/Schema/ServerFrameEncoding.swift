import SwitchboardCore

extension ServerFrame {
    /// The frame as one MessagePack map: `"t"`, then `"id"` for responses, then the fields.
    public func encode() -> [UInt8] {
        switch self {
        case .ok(let id):
            var writer = MessagePackWriter(reservingCapacity: 16)
            writer.writeHead(.ok, id: id, fields: 0)
            return writer.bytes
        case .loginOk(let id, let granted):
            var writer = MessagePackWriter(reservingCapacity: 160 + granted.ticket.secret.utf8.count)
            writer.writeHead(.loginOk, id: id, fields: 7)
            writer.writeKey(.session); writer.writeUInt(granted.session.rawValue)
            writer.writeKey(.resumeSecret); writer.writeString(granted.ticket.secret)
            writer.writeKey(.resumed); writer.writeBool(granted.resumed)
            writer.writeKey(.heartbeatInterval); writer.writeCount(granted.heartbeatInterval)
            writer.writeKey(.presenceTimeout); writer.writeCount(granted.presenceTimeout)
            writer.writeKey(.lostMessages); writer.writeCount(granted.loss.droppedPushes)
            writer.writeKey(.lostChannels)
            writer.writeArrayHeader(granted.loss.channels.count)
            for channel in granted.loss.channels {
                writer.writeMapHeader(2)
                writer.writeKey(.channelType); writer.writeInt(Int64(channel.type.rawValue))
                writer.writeKey(.channel); writer.writeString(channel.name)
            }
            return writer.bytes
        case .error(let id, let error):
            var writer = MessagePackWriter(
                reservingCapacity: 64 + error.operation.utf8.count + error.reason.utf8.count)
            writer.writeHead(.error, id: id, fields: 3)
            writer.writeKey(.code); writer.writeInt(Int64(error.code.rawValue))
            writer.writeKey(.operation); writer.writeString(error.operation)
            writer.writeKey(.reason); writer.writeString(error.reason)
            return writer.bytes
        case .message(let delivery):
            return Wire.encodeMessage(delivery)
        case .tokenPrivilegeWillExpire(let secondsLeft):
            return Wire.encodeTokenWarning(secondsLeft: secondsLeft)
        case .closing(let reason, let detail):
            var writer = MessagePackWriter(reservingCapacity: 40 + detail.utf8.count)
            writer.writeMapHeader(3)
            writer.writeKey(.t); writer.writeString(ServerFrameType.closing.rawValue)
            writer.writeKey(.reason); writer.writeInt(Int64(reason.rawValue))
            writer.writeKey(.detail); writer.writeString(detail)
            return writer.bytes
        }
    }
}

extension MessagePackWriter {
    /// Writes the map header and the `"t"` and `"id"` entries of a response.
    mutating func writeHead(_ type: ServerFrameType, id: UInt32, fields: Int) {
        writeMapHeader(fields + 2)
        writeKey(.t); writeString(type.rawValue)
        writeKey(.id); writeUInt(UInt64(id))
    }
}
