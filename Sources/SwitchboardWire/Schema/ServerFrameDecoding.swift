import SwitchboardCore

extension ServerFrame {
    /// Decodes one server frame.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> ServerFrame {
        try decodeFrame(bytes)
    }

    /// Decodes one server frame.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ServerFrame {
        try decodeFrame(bytes)
    }

    /// Decodes one server frame.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> ServerFrame {
        try decodeFrame(bytes)
    }

    /// Decodes one server frame.
    public static func decode<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ServerFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        try decodeFrame(bytes)
    }

    static func decodeFrame<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ServerFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        var reader = MessagePackReader(bytes)
        let head = try reader.readFrameHead()
        guard let type = ServerFrameType(rawValue: head.type) else {
            throw WireError(.unknownMessageType(head.type), offset: 0, requestId: head.id, messageType: head.type)
        }
        switch type {
        case .ok: return .ok(id: try head.requiredId())
        case .loginOk: return try decodeLoginOk(&reader, head)
        case .error: return try decodeError(&reader, head)
        case .message: return try decodeMessage(&reader, head)
        case .tokenPrivilegeWillExpire:
            var secondsLeft: Int?
            try reader.readFields(head) { key, reader throws(WireError) in
                guard key == .secondsLeft else { return false }
                secondsLeft = try reader.readCount()
                return true
            }
            return .tokenPrivilegeWillExpire(secondsLeft: try head.required(secondsLeft, .secondsLeft))
        case .closing:
            var reason: Int?
            var detail = ""
            try reader.readFields(head) { key, reader throws(WireError) in
                switch key {
                case .reason: reason = try reader.readInteger(Int.self)
                case .detail: detail = try reader.readString()
                default: return false
                }
                return true
            }
            let code = try head.required(reason, .reason)
            return .closing(reason: RtmLinkStateChangeReason(rawValue: code) ?? .unknown, detail: detail)
        }
    }

    private static func decodeLoginOk<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead
    ) throws(WireError) -> ServerFrame {
        let id = try head.requiredId()
        var session: UInt64?
        var secret: String?
        var resumed: Bool?
        var heartbeat: Int?
        var presence: Int?
        var lostMessages = 0
        var lostChannels: [ChannelKey] = []
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .session: session = try reader.readInteger(UInt64.self)
            case .resumeSecret: secret = try reader.readString()
            case .resumed: resumed = try reader.readBool()
            case .heartbeatInterval: heartbeat = try reader.readCount()
            case .presenceTimeout: presence = try reader.readCount()
            case .lostMessages: lostMessages = try reader.readCount()
            case .lostChannels: lostChannels = try reader.readChannelKeys()
            default: return false
            }
            return true
        }
        let sessionId = SessionID(try head.required(session, .session))
        let granted = LoginGranted(
            session: sessionId,
            ticket: ResumeTicket(session: sessionId, secret: try head.required(secret, .resumeSecret)),
            resumed: try head.required(resumed, .resumed),
            heartbeatInterval: try head.required(heartbeat, .heartbeatInterval),
            presenceTimeout: try head.required(presence, .presenceTimeout),
            loss: ResumeLoss(droppedPushes: lostMessages, channels: lostChannels))
        return .loginOk(id: id, granted)
    }

    private static func decodeError<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead
    ) throws(WireError) -> ServerFrame {
        let id = try head.requiredId()
        var code: RtmErrorCode?
        var operation = ""
        var reason = ""
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .code:
                let start = reader.offset
                let raw = try reader.readInteger(Int.self)
                guard let known = RtmErrorCode(rawValue: raw) else {
                    throw WireError(.invalidValue("unknown error code \(raw)"), offset: start)
                }
                code = known
            case .operation: operation = try reader.readString()
            case .reason: reason = try reader.readString()
            default: return false
            }
            return true
        }
        return .error(id: id, RtmError(try head.required(code, .code), operation: operation, reason: reason))
    }

    private static func decodeMessage<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead
    ) throws(WireError) -> ServerFrame {
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
        return .message(
            MessageDelivery(
                channelType: try head.required(channelType, .channelType),
                channelName: try head.required(channel, .channel), channelTopic: topic,
                payload: try head.required(message, .message), publisher: try head.required(publisher, .publisher),
                customType: customType, timestamp: try head.required(timestamp, .timestamp)))
    }
}

extension MessagePackReader {
    /// Reads `lostChannels`: an array of `{channelType, channel}` maps.
    mutating func readChannelKeys() throws(WireError) -> [ChannelKey] {
        let count = try readArrayHeader()
        var keys: [ChannelKey] = []
        keys.reserveCapacity(count)
        for _ in 0..<count {
            let start = offset
            var type: RtmChannelType?
            var name: String?
            for _ in 0..<(try readMapHeader()) {
                switch try readFrameKey() {
                case .channelType?: type = try readChannelType(allowed: ChannelTypes.named)
                case .channel?: name = try readString()
                default: try skipValue()
                }
            }
            guard let type, let name else {
                throw WireError(.invalidValue("a lost channel needs channelType and channel"), offset: start)
            }
            keys.append(ChannelKey(type, name))
        }
        return keys
    }
}
