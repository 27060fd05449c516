import SwitchboardCore

extension ClientFrame {
    /// Decodes one client frame; on failure the error carries the request id if it was readable.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> ClientFrame {
        try decodeFrame(bytes)
    }

    /// Decodes one client frame; on failure the error carries the request id if it was readable.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ClientFrame {
        try decodeFrame(bytes)
    }

    /// Decodes one client frame; on failure the error carries the request id if it was readable.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> ClientFrame {
        try decodeFrame(bytes)
    }

    /// Decodes one client frame; on failure the error carries the request id if it was readable.
    public static func decode<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ClientFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        try decodeFrame(bytes)
    }

    static func decodeFrame<Bytes: RandomAccessCollection>(
        _ bytes: Bytes
    ) throws(WireError) -> ClientFrame where Bytes.Element == UInt8, Bytes.Index == Int {
        var reader = MessagePackReader(bytes)
        let head = try reader.readFrameHead()
        guard let type = ClientFrameType(rawValue: head.type) else {
            throw WireError(.unknownMessageType(head.type), offset: 0, requestId: head.id, messageType: head.type)
        }
        let id = try head.requiredId()
        switch type {
        case .login: return try decodeLogin(&reader, head, id: id)
        case .logout: return .logout(id: id)
        case .heartbeat: return .heartbeat(id: id)
        case .renewToken:
            var token: String?
            try reader.readFields(head) { key, reader throws(WireError) in
                guard key == .token else { return false }
                token = try reader.readString()
                return true
            }
            return .renewToken(id: id, token: try head.required(token, .token))
        case .subscribe:
            var channel: String?
            var features: UInt32?
            try reader.readFields(head) { key, reader throws(WireError) in
                switch key {
                case .channel: channel = try reader.readString()
                case .features: features = try reader.readInteger(UInt32.self)
                default: return false
                }
                return true
            }
            return .subscribe(
                id: id, channel: try head.required(channel, .channel),
                features: RtmSubscribeChannelFeature(rawValue: try head.required(features, .features)))
        case .unsubscribe:
            var channel: String?
            try reader.readFields(head) { key, reader throws(WireError) in
                guard key == .channel else { return false }
                channel = try reader.readString()
                return true
            }
            return .unsubscribe(id: id, channel: try head.required(channel, .channel))
        case .publish: return try decodePublish(&reader, head, id: id)
        }
    }

    private static func decodeLogin<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead, id: UInt32
    ) throws(WireError) -> ClientFrame {
        var appId: String?
        var userId: String?
        var token: String?
        var heartbeat: Int?
        var presence: Int?
        var resumeSession: UInt64?
        var resumeSecret: String?
        var resumeReceived: UInt64 = 0
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .appId: appId = try reader.readString()
            case .userId: userId = try reader.readString()
            case .token: token = try reader.readString()
            case .heartbeatInterval: heartbeat = try reader.readCount()
            case .presenceTimeout: presence = try reader.readCount()
            case .resumeSession: resumeSession = try reader.readInteger(UInt64.self)
            case .resumeSecret: resumeSecret = try reader.readString()
            case .resumeReceived: resumeReceived = try reader.readInteger(UInt64.self)
            default: return false
            }
            return true
        }
        var resume: ResumeTicket?
        switch (resumeSession, resumeSecret) {
        case (let session?, let secret?):
            resume = ResumeTicket(session: SessionID(session), secret: secret, received: resumeReceived)
        case (nil, nil): resume = nil
        default:
            throw WireError(
                .invalidValue("resumeSession and resumeSecret must be given together"), offset: 0,
                requestId: id, messageType: head.type)
        }
        return .login(
            id: id, appId: try head.required(appId, .appId), userId: try head.required(userId, .userId),
            token: try head.required(token, .token),
            heartbeatInterval: try head.required(heartbeat, .heartbeatInterval),
            presenceTimeout: try head.required(presence, .presenceTimeout), resume: resume)
    }

    private static func decodePublish<Bytes>(
        _ reader: inout MessagePackReader<Bytes>, _ head: FrameHead, id: UInt32
    ) throws(WireError) -> ClientFrame {
        var channelType: RtmChannelType?
        var channel: String?
        var message: MessagePayload?
        var customType = ""
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.publishable)
            case .channel: channel = try reader.readString()
            case .message: message = try reader.readPayload()
            case .customType: customType = try reader.readString()
            default: return false
            }
            return true
        }
        return .publish(
            id: id, channelType: try head.required(channelType, .channelType),
            channel: try head.required(channel, .channel), message: try head.required(message, .message),
            customType: customType)
    }
}
