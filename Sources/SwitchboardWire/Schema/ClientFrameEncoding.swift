import SwitchboardCore

extension ClientFrame {
    /// The frame as one MessagePack map: `"t"`, then `"id"`, then the fields.
    public func encode() -> [UInt8] {
        var writer: MessagePackWriter
        switch self {
        case .login(let id, let appId, let userId, let token, let heartbeat, let presence, let resume):
            writer = MessagePackWriter(reservingCapacity: 96 + appId.utf8.count + userId.utf8.count + token.utf8.count)
            let resumeFields = resume.map { $0.received > 0 ? 3 : 2 } ?? 0
            writer.writeHead(.login, id: id, fields: 5 + resumeFields)
            writer.writeKey(.appId); writer.writeString(appId)
            writer.writeKey(.userId); writer.writeString(userId)
            writer.writeKey(.token); writer.writeString(token)
            writer.writeKey(.heartbeatInterval); writer.writeCount(heartbeat)
            writer.writeKey(.presenceTimeout); writer.writeCount(presence)
            if let resume {
                writer.writeKey(.resumeSession); writer.writeUInt(resume.session.rawValue)
                writer.writeKey(.resumeSecret); writer.writeString(resume.secret)
                if resume.received > 0 { writer.writeKey(.resumeReceived); writer.writeUInt(resume.received) }
            }
        case .logout(let id), .heartbeat(let id):
            writer = MessagePackWriter(reservingCapacity: 24)
            writer.writeHead(kind, id: id, fields: 0)
        case .renewToken(let id, let token):
            writer = MessagePackWriter(reservingCapacity: 32 + token.utf8.count)
            writer.writeHead(.renewToken, id: id, fields: 1)
            writer.writeKey(.token); writer.writeString(token)
        case .subscribe(let id, let channel, let features):
            writer = MessagePackWriter(reservingCapacity: 48 + channel.utf8.count)
            writer.writeHead(.subscribe, id: id, fields: 2)
            writer.writeKey(.channel); writer.writeString(channel)
            writer.writeKey(.features); writer.writeUInt(UInt64(features.rawValue))
        case .unsubscribe(let id, let channel):
            writer = MessagePackWriter(reservingCapacity: 32 + channel.utf8.count)
            writer.writeHead(.unsubscribe, id: id, fields: 1)
            writer.writeKey(.channel); writer.writeString(channel)
        case .publish(let id, let channelType, let channel, let message, let customType):
            writer = MessagePackWriter(
                reservingCapacity: 96 + message.byteCount + channel.utf8.count + customType.utf8.count)
            writer.writeHead(.publish, id: id, fields: customType.isEmpty ? 3 : 4)
            writer.writeKey(.channelType); writer.writeInt(Int64(channelType.rawValue))
            writer.writeKey(.channel); writer.writeString(channel)
            writer.writeKey(.message); writer.writePayload(message)
            if !customType.isEmpty {
                writer.writeKey(.customType); writer.writeString(customType)
            }
        }
        return writer.bytes
    }
}

extension MessagePackWriter {
    /// Writes the map header and the `"t"` and `"id"` entries of a request.
    mutating func writeHead(_ type: ClientFrameType, id: UInt32, fields: Int) {
        writeMapHeader(fields + 2)
        writeKey(.t); writeString(type.rawValue)
        writeKey(.id); writeUInt(UInt64(id))
    }
}
