import SwitchboardCore

/// The session feature's requests: login, logout, heartbeat, token renewal.
public enum SessionOperation: ClientOperationFamily {
    /// The channel it is about (for logs): none.
    public var channelName: String? { nil }

    /// Log in, or resume a session kept since the connection dropped. Must be the first request.
    case login(Login)
    /// End the session now.
    case logout
    /// The client is alive; the server answers `ok` (the pong).
    case heartbeat
    /// Replace the session's token.
    case renewToken(token: String)

    /// The reference operation it carries out, whose name is its `"t"`.
    public var reference: OperationName.Session {
        switch self {
        case .login: .login
        case .logout: .logout
        case .heartbeat: .heartbeat
        case .renewToken: .renewToken
        }
    }

    public var name: String { Self.wireNames.name(of: reference) }

    /// Heartbeats first: a session sends one every few seconds.
    static let wireNames = WireOperationNames<OperationName.Session>([.heartbeat, .login, .logout, .renewToken])

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        switch wireNames.operation(named: head.type) {
        case .login?: return .login(try Login.decode(head, &reader))
        case .logout?: return .logout
        case .heartbeat?: return .heartbeat
        case .renewToken?:
            var token: String?
            try reader.readFields(head) { key, reader throws(WireError) in
                guard key == .token else { return false }
                token = try reader.readString()
                return true
            }
            return .renewToken(token: try head.required(token, .token))
        case .initialize?, nil: return nil
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .login(let login): login.encodeFields(&frame)
        case .logout, .heartbeat: break
        case .renewToken(let token): frame.field(.token) { $0.writeString(token) }
        }
    }
}

extension Login {
    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self {
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
            case .heartbeatInterval: heartbeat = try reader.readClampedCount()
            case .presenceTimeout: presence = try reader.readClampedCount()
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
                requestId: head.id, messageType: head.type)
        }
        return Login(
            appId: try head.required(appId, .appId), userId: try head.required(userId, .userId),
            token: try head.required(token, .token),
            heartbeatInterval: try head.required(heartbeat, .heartbeatInterval),
            presenceTimeout: try head.required(presence, .presenceTimeout), resume: resume)
    }

    func encodeFields(_ frame: inout FrameWriter) {
        frame.field(.appId) { $0.writeString(appId) }
        frame.field(.userId) { $0.writeString(userId) }
        frame.field(.token) { $0.writeString(token) }
        frame.field(.heartbeatInterval) { $0.writeCount(heartbeatInterval) }
        frame.field(.presenceTimeout) { $0.writeCount(presenceTimeout) }
        guard let resume else { return }
        frame.field(.resumeSession) { $0.writeUInt(resume.session.rawValue) }
        frame.field(.resumeSecret) { $0.writeString(resume.secret) }
        if resume.received > 0 { frame.field(.resumeReceived) { $0.writeUInt(resume.received) } }
    }
}

/// The session feature's answers.
public enum SessionAnswer: AnswerFamily {
    /// A login succeeded (`"t": "loginOk"`).
    case login(LoginAccepted)

    var frameType: String { "loginOk" }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .login(let accepted): accepted.encodeFields(&frame)
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "loginOk" else { return nil }
        return .login(try LoginAccepted.decode(head, &reader))
    }
}

/// What a client learns from a successful login.
public struct LoginAccepted: Sendable, Hashable {
    /// The session, new or resumed, and its resume secret.
    public var ticket: ResumeTicket
    /// True when an existing session was resumed.
    public var resumed: Bool
    /// The heartbeat interval in force, in seconds.
    public var heartbeatInterval: Int
    /// The presence timeout in force, in seconds.
    public var presenceTimeout: Int
    /// What a resume could not restore.
    public var loss: ResumeLoss

    /// Creates the answer.
    public init(ticket: ResumeTicket, resumed: Bool, heartbeatInterval: Int, presenceTimeout: Int, loss: ResumeLoss) {
        self.ticket = ticket
        self.resumed = resumed
        self.heartbeatInterval = heartbeatInterval
        self.presenceTimeout = presenceTimeout
        self.loss = loss
    }

    /// The answer to a login the session module granted, with what its resume lost.
    public init(_ grant: LoginGranted, loss: ResumeLoss) {
        self.init(
            ticket: grant.ticket, resumed: grant.resumed, heartbeatInterval: grant.heartbeatInterval,
            presenceTimeout: grant.presenceTimeout, loss: loss)
    }

    /// The session.
    public var session: SessionID { ticket.session }

    func encodeFields(_ frame: inout FrameWriter) {
        frame.field(.session) { $0.writeUInt(ticket.session.rawValue) }
        frame.field(.resumeSecret) { $0.writeString(ticket.secret) }
        frame.field(.resumed) { $0.writeBool(resumed) }
        frame.field(.heartbeatInterval) { $0.writeCount(heartbeatInterval) }
        frame.field(.presenceTimeout) { $0.writeCount(presenceTimeout) }
        frame.field(.lostMessages) { $0.writeCount(loss.droppedPushes) }
        frame.field(.lostChannels) { $0.writeChannelAddresses(loss.channels) }
        // Only when true: a resume on the node that held the session never carries it.
        if loss.historyLost { frame.field(.historyLost) { $0.writeBool(true) } }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self {
        var session: UInt64?
        var secret: String?
        var resumed: Bool?
        var heartbeat: Int?
        var presence: Int?
        var lostMessages = 0
        var lostChannels: [ChannelAddress] = []
        var historyLost = false
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .session: session = try reader.readInteger(UInt64.self)
            case .resumeSecret: secret = try reader.readString()
            case .resumed: resumed = try reader.readBool()
            case .heartbeatInterval: heartbeat = try reader.readCount()
            case .presenceTimeout: presence = try reader.readCount()
            case .lostMessages: lostMessages = try reader.readCount()
            case .lostChannels: lostChannels = try reader.readChannelAddresses()
            case .historyLost: historyLost = try reader.readBool()
            default: return false
            }
            return true
        }
        return LoginAccepted(
            ticket: ResumeTicket(
                session: SessionID(try head.required(session, .session)), secret: try head.required(secret, .resumeSecret)),
            resumed: try head.required(resumed, .resumed),
            heartbeatInterval: try head.required(heartbeat, .heartbeatInterval),
            presenceTimeout: try head.required(presence, .presenceTimeout),
            loss: ResumeLoss(droppedPushes: lostMessages, channels: lostChannels, historyLost: historyLost))
    }
}

extension SessionPush: PushFamily {
    var frameType: String {
        switch self {
        case .tokenPrivilegeWillExpire: "tokenPrivilegeWillExpire"
        case .messagesMayBeLost: "messagesMayBeLost"
        }
    }

    func encodeFrame() -> [UInt8] {
        var frame = FrameWriter(type: frameType, id: nil, capacity: 48)
        switch self {
        case .tokenPrivilegeWillExpire(let secondsLeft, let channel):
            frame.field(.secondsLeft) { $0.writeCount(secondsLeft) }
            if let channel { frame.field(.channel) { $0.writeString(channel) } }
        case .messagesMayBeLost(let type, let channel):
            frame.field(.channelType) { $0.writeInt(Int64(type.rawValue)) }
            frame.field(.channel) { $0.writeString(channel) }
        }
        return frame.finish()
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        if head.type == "messagesMayBeLost" { return try decodeGap(head, &reader) }
        guard head.type == "tokenPrivilegeWillExpire" else { return nil }
        var secondsLeft: Int?
        var channel: String?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .secondsLeft: secondsLeft = try reader.readCount()
            case .channel: channel = try reader.readString()
            default: return false
            }
            return true
        }
        return .tokenPrivilegeWillExpire(secondsLeft: try head.required(secondsLeft, .secondsLeft), channel: channel)
    }

    private static func decodeGap<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self {
        var type: RtmChannelType?
        var channel: String?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: type = try reader.readChannelType(allowed: .publishable)
            case .channel: channel = try reader.readString()
            default: return false
            }
            return true
        }
        return .messagesMayBeLost(channelType: try head.required(type, .channelType), channel: try head.required(channel, .channel))
    }
}

extension ClientFrame {
    /// A `login` request.
    public static func login(id: UInt32, _ request: Login) -> ClientFrame {
        ClientFrame(id: id, .session(.login(request)))
    }
    /// A `logout` request.
    public static func logout(id: UInt32) -> ClientFrame { ClientFrame(id: id, .session(.logout)) }
    /// A `heartbeat` request.
    public static func heartbeat(id: UInt32) -> ClientFrame { ClientFrame(id: id, .session(.heartbeat)) }
    /// A `renewToken` request.
    public static func renewToken(id: UInt32, token: String) -> ClientFrame {
        ClientFrame(id: id, .session(.renewToken(token: token)))
    }
}

extension ServerFrame {
    /// The answer to a request that succeeded with no data.
    public static func ok(id: UInt32) -> ServerFrame { .answer(id: id, .done) }
    /// The answer to a login.
    public static func loginOk(id: UInt32, _ accepted: LoginAccepted) -> ServerFrame {
        .answer(id: id, .session(.login(accepted)))
    }
    /// The login answer this frame carries, if it is one.
    public var loginAccepted: LoginAccepted? {
        if case .answer(_, .session(.login(let accepted))) = self { accepted } else { nil }
    }
}

extension SessionOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        switch self {
        case .login, .logout, .heartbeat: nil
        case .renewToken: .other
        }
    }
}
