import SwitchboardCore

/// The presence feature's requests: who is in a channel, where a user is, temporary states, and
/// user-level presence.
public enum PresenceOperation: ClientOperationFamily {
    /// The channel it is about (for logs).
    public var channelName: String? {
        switch self {
        case .whoNow(let channel, _, _, _), .setState(let channel, _), .getState(let channel, _), .removeState(let channel, _):
            channel.name
        case .whereNow, .getUserPresence: nil
        }
    }

    /// A page of a channel's members (`whoNow`, the reference's `getOnlineUsers`).
    case whoNow(channel: ChannelAddress, includeUserId: Bool, includeState: Bool, page: String)
    /// The channels a user is in (`whereNow`, the reference's `getUserChannels`).
    case whereNow(userId: UserID)
    /// Set keys of the caller's state in a channel.
    case setState(channel: ChannelAddress, items: [StateItem])
    /// A user's state in a channel.
    case getState(channel: ChannelAddress, userId: UserID)
    /// Remove keys (all when none) of the caller's state in a channel.
    case removeState(channel: ChannelAddress, keys: [String])
    /// Whether users are online and when they were last seen.
    case getUserPresence(userIds: [UserID])

    /// The reference operation it carries out, whose name is its `"t"`.
    public var reference: OperationName.Presence {
        switch self {
        case .whoNow: .whoNow
        case .whereNow: .whereNow
        case .setState: .setState
        case .getState: .getState
        case .removeState: .removeState
        case .getUserPresence: .getUserPresence
        }
    }

    public var name: String { Self.wireNames.name(of: reference) }

    static let wireNames = WireOperationNames(OperationName.Presence.allCases)

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard let type = wireNames.operation(named: head.type) else { return nil }
        var channelType: RtmChannelType?
        var channel: String?
        var includeUserId = true
        var includeState = false
        var page = ""
        var userId: String?
        var items: [StateItem]?
        var keys: [String]?
        var userIds: [String]?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.presence)
            case .channel: channel = try reader.readString()
            case .includeUserId where type == .whoNow: includeUserId = try reader.readBool()
            case .includeState where type == .whoNow: includeState = try reader.readBool()
            case .page where type == .whoNow: page = try reader.readString()
            case .userId where type == .whereNow || type == .getState: userId = try reader.readString()
            case .items where type == .setState: items = try reader.readStateItems()
            case .keys where type == .removeState: keys = try reader.readStrings()
            case .userIds where type == .getUserPresence: userIds = try reader.readStrings()
            default: return false
            }
            return true
        }
        func address() throws(WireError) -> ChannelAddress {
            ChannelAddress(try head.required(channelType, .channelType), try head.required(channel, .channel))
        }
        switch type {
        case .whoNow: return .whoNow(channel: try address(), includeUserId: includeUserId, includeState: includeState, page: page)
        case .whereNow: return .whereNow(userId: try head.required(userId, .userId))
        case .setState: return .setState(channel: try address(), items: try head.required(items, .items))
        case .getState: return .getState(channel: try address(), userId: try head.required(userId, .userId))
        case .removeState: return .removeState(channel: try address(), keys: keys ?? [])
        case .getUserPresence: return .getUserPresence(userIds: try head.required(userIds, .userIds))
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .whoNow(let channel, let includeUserId, let includeState, let page):
            frame.channel(channel)
            frame.field(.includeUserId) { $0.writeBool(includeUserId) }
            frame.field(.includeState) { $0.writeBool(includeState) }
            if !page.isEmpty { frame.field(.page) { $0.writeString(page) } }
        case .whereNow(let userId):
            frame.field(.userId) { $0.writeString(userId) }
        case .setState(let channel, let items):
            frame.channel(channel)
            frame.field(.items) { $0.writeStateItems(items) }
        case .getState(let channel, let userId):
            frame.channel(channel)
            frame.field(.userId) { $0.writeString(userId) }
        case .removeState(let channel, let keys):
            frame.channel(channel)
            frame.field(.keys) { $0.writeStrings(keys) }
        case .getUserPresence(let userIds):
            frame.field(.userIds) { $0.writeStrings(userIds) }
        }
    }
}

/// The presence feature's answers that carry data: `{"t": "ok", "id": N, "result": "<op>", …}`.
public enum PresenceAnswer: AnswerFamily {
    /// A page of members.
    case whoNow(WhoNowPage)
    /// A user's channels.
    case whereNow([ChannelAddress])
    /// A user's state in a channel.
    case getState(UserState)
    /// Users' presence.
    case getUserPresence([UserPresence])

    var frameType: String { "ok" }

    /// The operation it answers.
    private var result: OperationName.Presence {
        switch self {
        case .whoNow: .whoNow
        case .whereNow: .whereNow
        case .getState: .getState
        case .getUserPresence: .getUserPresence
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        frame.field(.result) { $0.writeString(PresenceOperation.wireNames.name(of: result)) }
        switch self {
        case .whoNow(let page):
            frame.field(.totalOccupancy) { $0.writeCount(page.totalOccupancy) }
            frame.field(.users) { $0.writeUserStates(page.users) }
            frame.field(.nextPage) { $0.writeString(page.nextPage) }
        case .whereNow(let channels):
            frame.field(.channels) { $0.writeChannelAddresses(channels) }
        case .getState(let state):
            frame.field(.userId) { $0.writeString(state.userId) }
            frame.field(.states) { $0.writeStates(state.states) }
        case .getUserPresence(let users):
            frame.field(.users) { writer in
                writer.writeArrayHeader(users.count)
                for user in users {
                    writer.writeMapHeader(3)
                    writer.writeKey(.userId); writer.writeString(user.userId)
                    writer.writeKey(.online); writer.writeBool(user.online)
                    writer.writeKey(.lastSeen); writer.writeUInt(user.lastSeen)
                }
            }
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "ok", let result = head.result.flatMap(PresenceOperation.wireNames.operation(named:)),
            [.whoNow, .whereNow, .getState, .getUserPresence].contains(result)
        else { return nil }
        var totalOccupancy: Int?
        var users: [UserState]?
        var presences: [UserPresence]?
        var nextPage = ""
        var channels: [ChannelAddress]?
        var userId: String?
        var states: [String: String]?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .totalOccupancy where result == .whoNow: totalOccupancy = try reader.readCount()
            case .users where result == .whoNow: users = try reader.readUserStates()
            case .users where result == .getUserPresence: presences = try reader.readUserPresences()
            case .nextPage where result == .whoNow: nextPage = try reader.readString()
            case .channels where result == .whereNow: channels = try reader.readChannelAddresses()
            case .userId where result == .getState: userId = try reader.readString()
            case .states where result == .getState: states = try reader.readStates()
            default: return false
            }
            return true
        }
        switch result {
        case .whoNow:
            return .whoNow(
                WhoNowPage(
                    totalOccupancy: try head.required(totalOccupancy, .totalOccupancy), users: try head.required(users, .users),
                    nextPage: nextPage))
        case .whereNow: return .whereNow(try head.required(channels, .channels))
        case .getState: return .getState(UserState(userId: try head.required(userId, .userId), states: states ?? [:]))
        default: return .getUserPresence(try head.required(presences, .users))
        }
    }
}

extension PresenceDelivery: PushFamily {
    var frameType: String { "presence" }

    func encodeFrame() -> [UInt8] {
        var frame = FrameWriter(type: frameType, id: nil, capacity: approximateSize)
        frame.field(.eventType) { $0.writeInt(Int64(type.rawValue)) }
        frame.channel(ChannelAddress(channelType, channelName))
        frame.field(.publisher) { $0.writeString(publisher) }
        frame.field(.states) { $0.writeStates(states) }
        frame.field(.timestamp) { $0.writeUInt(timestamp) }
        switch type {
        case .snapshot:
            frame.field(.snapshot) { $0.writeUserStates(snapshot) }
            frame.field(.totalOccupancy) { $0.writeCount(totalOccupancy) }
        case .interval:
            let info = interval ?? PresenceIntervalInfo(totalOccupancy: 0)
            frame.field(.joinUserList) { $0.writeStrings(info.joinUserList) }
            frame.field(.leaveUserList) { $0.writeStrings(info.leaveUserList) }
            frame.field(.timeoutUserList) { $0.writeStrings(info.timeoutUserList) }
            frame.field(.userStateList) { $0.writeUserStates(info.userStateList) }
            frame.field(.totalOccupancy) { $0.writeCount(info.totalOccupancy) }
        default: break
        }
        if firstOrLast { frame.field(.firstOrLast) { $0.writeBool(true) } }
        if more { frame.field(.more) { $0.writeBool(true) } }
        return frame.finish()
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "presence" else { return nil }
        var type: RtmPresenceEventType?
        var channelType: RtmChannelType?
        var channel: String?
        var publisher = ""
        var states: [String: String] = [:]
        var timestamp: UInt64?
        var snapshot: [UserState] = []
        var info = PresenceIntervalInfo(totalOccupancy: 0)
        var firstOrLast = false
        var more = false
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .eventType:
                let start = reader.offset
                let raw = try reader.readInteger(Int.self)
                guard let known = RtmPresenceEventType(rawValue: raw) else {
                    throw WireError(.invalidValue("unknown presence event type \(raw)"), offset: start)
                }
                type = known
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.presence)
            case .channel: channel = try reader.readString()
            case .publisher: publisher = try reader.readString()
            case .states: states = try reader.readStates()
            case .timestamp: timestamp = try reader.readInteger(UInt64.self)
            case .snapshot: snapshot = try reader.readUserStates()
            case .joinUserList: info.joinUserList = try reader.readStrings()
            case .leaveUserList: info.leaveUserList = try reader.readStrings()
            case .timeoutUserList: info.timeoutUserList = try reader.readStrings()
            case .userStateList: info.userStateList = try reader.readUserStates()
            case .totalOccupancy: info.totalOccupancy = try reader.readCount()
            case .firstOrLast: firstOrLast = try reader.readBool()
            case .more: more = try reader.readBool()
            default: return false
            }
            return true
        }
        let eventType = try head.required(type, .eventType)
        return PresenceDelivery(
            type: eventType, channelType: try head.required(channelType, .channelType),
            channelName: try head.required(channel, .channel), publisher: publisher, states: states, snapshot: snapshot,
            interval: eventType == .interval ? info : nil, firstOrLast: firstOrLast, more: more,
            totalOccupancy: eventType == .snapshot ? info.totalOccupancy : 0, timestamp: try head.required(timestamp, .timestamp))
    }
}

extension ClientFrame {
    /// A `whoNow` request.
    public static func whoNow(
        id: UInt32, channel: ChannelAddress, includeUserId: Bool = true, includeState: Bool = false, page: String = ""
    ) -> ClientFrame {
        ClientFrame(id: id, .presence(.whoNow(channel: channel, includeUserId: includeUserId, includeState: includeState, page: page)))
    }
    /// A `whereNow` request.
    public static func whereNow(id: UInt32, userId: UserID) -> ClientFrame { ClientFrame(id: id, .presence(.whereNow(userId: userId))) }
    /// A `setState` request.
    public static func setState(id: UInt32, channel: ChannelAddress, items: [StateItem]) -> ClientFrame {
        ClientFrame(id: id, .presence(.setState(channel: channel, items: items)))
    }
    /// A `getState` request.
    public static func getState(id: UInt32, channel: ChannelAddress, userId: UserID) -> ClientFrame {
        ClientFrame(id: id, .presence(.getState(channel: channel, userId: userId)))
    }
    /// A `removeState` request.
    public static func removeState(id: UInt32, channel: ChannelAddress, keys: [String]) -> ClientFrame {
        ClientFrame(id: id, .presence(.removeState(channel: channel, keys: keys)))
    }
    /// A `getUserPresence` request.
    public static func getUserPresence(id: UInt32, userIds: [UserID]) -> ClientFrame {
        ClientFrame(id: id, .presence(.getUserPresence(userIds: userIds)))
    }
}

extension ServerFrame {
    /// The presence event this frame pushes, if it is one.
    public var presenceEvent: PresenceDelivery? {
        if case .push(.presence(let event)) = self { event } else { nil }
    }
    /// The presence answer this frame carries, if it is one.
    public var presenceAnswer: PresenceAnswer? {
        if case .answer(_, .presence(let answer)) = self { answer } else { nil }
    }
}

extension FrameWriter {
    /// Writes `channelType` and `channel`.
    mutating func channel(_ address: ChannelAddress) {
        field(.channelType) { $0.writeInt(Int64(address.type.rawValue)) }
        field(.channel) { $0.writeString(address.name) }
    }
}

extension ChannelTypes {
    /// The channels presence is kept for.
    static var presence: ChannelTypes { ChannelTypes(.message, .stream) }
}

extension MessagePackWriter {
    /// Writes a state as a map of strings, keys in order so the bytes are stable.
    mutating func writeStates(_ states: [String: String]) {
        writeMapHeader(states.count)
        for key in states.keys.sorted() {
            writeString(key)
            writeString(states[key] ?? "")
        }
    }

    /// Writes state items as a map, in their order.
    mutating func writeStateItems(_ items: [StateItem]) {
        writeMapHeader(items.count)
        for item in items {
            writeString(item.key)
            writeString(item.value)
        }
    }

    /// Writes an array of `{userId, states}` maps.
    mutating func writeUserStates(_ users: [UserState]) {
        writeArrayHeader(users.count)
        for user in users {
            writeMapHeader(2)
            writeKey(.userId); writeString(user.userId)
            writeKey(.states); writeStates(user.states)
        }
    }
}

extension MessagePackReader {
    /// Reads a map of strings (a key given twice: the last counts).
    mutating func readStates() throws(WireError) -> [String: String] {
        var states: [String: String] = [:]
        for item in try readStateItems() { states[item.key] = item.value }
        return states
    }

    /// Reads a map of strings as items, in order, keeping a key given twice (the module refuses it).
    mutating func readStateItems() throws(WireError) -> [StateItem] {
        let count = try readMapHeader()
        var items: [StateItem] = []
        items.reserveCapacity(min(count, 64))
        for _ in 0..<count { items.append(StateItem(key: try readString(), value: try readString())) }
        return items
    }

    /// Reads an array of `{userId, states}` maps.
    mutating func readUserStates() throws(WireError) -> [UserState] {
        try readArray { reader throws(WireError) in
            let start = reader.offset
            var userId: String?
            var states: [String: String] = [:]
            for _ in 0..<(try reader.readMapHeader()) {
                switch try reader.readFrameKey() {
                case .userId?: userId = try reader.readString()
                case .states?: states = try reader.readStates()
                default: try reader.skipValue()
                }
            }
            guard let userId else { throw WireError(.invalidValue("a user state needs userId"), offset: start) }
            return UserState(userId: userId, states: states)
        }
    }

    /// Reads an array of `{userId, online, lastSeen}` maps.
    mutating func readUserPresences() throws(WireError) -> [UserPresence] {
        try readArray { reader throws(WireError) in
            let start = reader.offset
            var userId: String?
            var online: Bool?
            var lastSeen: UInt64 = 0
            for _ in 0..<(try reader.readMapHeader()) {
                switch try reader.readFrameKey() {
                case .userId?: userId = try reader.readString()
                case .online?: online = try reader.readBool()
                case .lastSeen?: lastSeen = try reader.readInteger(UInt64.self)
                default: try reader.skipValue()
                }
            }
            guard let userId, let online else {
                throw WireError(.invalidValue("a user presence needs userId and online"), offset: start)
            }
            return UserPresence(userId: userId, online: online, lastSeen: lastSeen)
        }
    }
}

extension PresenceOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        .other
    }
}
