/// One key and value of a user's temporary state in a channel (the reference's `StateItem`).
public struct StateItem: Sendable, Hashable {
    /// The key.
    public var key: String
    /// The value, an opaque string (sealed by the SDK when client-side encryption is on).
    public var value: String
    /// Creates an item.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// A user and their temporary state in one channel (`RtmUserState`).
public struct UserState: Sendable, Hashable {
    /// The user id.
    public var userId: UserID
    /// The user's state; empty when the user set none (or the query did not ask for states).
    public var states: [String: String]
    /// Creates an entry.
    public init(userId: UserID, states: [String: String] = [:]) {
        self.userId = userId
        self.states = states
    }

    /// An upper bound of the bytes this entry takes in a frame.
    public var approximateSize: Int { userId.utf8.count + 32 + PresenceSize.of(states) }
}

/// Sizes of presence data as frames carry them: upper bounds, so that parts cut by them fit a frame.
public enum PresenceSize {
    /// The bytes `states` takes in a frame at most (each string's bytes plus its header).
    public static func of(_ states: [String: String]) -> Int {
        states.reduce(5) { $0 + $1.key.utf8.count + $1.value.utf8.count + 10 }
    }

    /// The bytes of a state's keys and values, as the per-user state limit counts them.
    public static func content(of states: [String: String]) -> Int {
        states.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    /// The content one presence push (or whoNow page) carries at most, so the whole frame stays
    /// under the wire's 66,560-byte limit.
    public static let partBudget = PushParts.budget
}

// MARK: Requests

/// Who is in a channel of the caller's app, a page at a time (`whoNow`, `getOnlineUsers`).
public struct WhoNow: BusRequest {
    public typealias Response = WhoNowPage
    public static let operation = OperationName.Presence.whoNow.rawValue
    public var caller: Caller
    /// The channel (message or stream).
    public var channel: ChannelAddress
    /// Whether entries carry user ids.
    public var includeUserId: Bool
    /// Whether entries carry states.
    public var includeState: Bool
    /// The `nextPage` of the previous answer; empty for the first page.
    public var page: String
    /// Creates the query.
    public init(caller: Caller, channel: ChannelAddress, includeUserId: Bool = true, includeState: Bool = false, page: String = "") {
        self.caller = caller
        self.channel = channel
        self.includeUserId = includeUserId
        self.includeState = includeState
        self.page = page
    }
}

/// One page of a channel's members.
public struct WhoNowPage: Sendable, Hashable {
    /// The length of `users`; the channel's whole occupancy when the query asked for neither ids
    /// nor states (the reference's definition).
    public var totalOccupancy: Int
    /// The members on this page, in join order.
    public var users: [UserState]
    /// The page to ask for next; empty when this was the last.
    public var nextPage: String
    /// Creates a page.
    public init(totalOccupancy: Int, users: [UserState], nextPage: String) {
        self.totalOccupancy = totalOccupancy
        self.users = users
        self.nextPage = nextPage
    }
}

/// The channels a user of the caller's app is in, quiet ones left out (`whereNow`, `getUserChannels`).
public struct WhereNow: BusRequest {
    public typealias Response = [ChannelAddress]
    public static let operation = OperationName.Presence.whereNow.rawValue
    public var caller: Caller
    /// The user asked about.
    public var userId: UserID
    /// Creates the query.
    public init(caller: Caller, userId: UserID) {
        self.caller = caller
        self.userId = userId
    }
}

/// Sets keys of the caller's temporary state in a channel it is in; other keys stay.
public struct SetPresenceState: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Presence.setState.rawValue
    public var caller: Caller
    /// The channel (message or stream).
    public var channel: ChannelAddress
    /// The keys and values to set, as sent (a key given twice is refused).
    public var items: [StateItem]
    /// Creates the request.
    public init(caller: Caller, channel: ChannelAddress, items: [StateItem]) {
        self.caller = caller
        self.channel = channel
        self.items = items
    }
}

/// A user's temporary state in a channel of the caller's app.
public struct GetPresenceState: BusRequest {
    public typealias Response = UserState
    public static let operation = OperationName.Presence.getState.rawValue
    public var caller: Caller
    /// The channel (message or stream).
    public var channel: ChannelAddress
    /// The user asked about.
    public var userId: UserID
    /// Creates the query.
    public init(caller: Caller, channel: ChannelAddress, userId: UserID) {
        self.caller = caller
        self.channel = channel
        self.userId = userId
    }
}

/// Removes keys of the caller's temporary state in a channel; no keys removes them all.
public struct RemovePresenceState: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Presence.removeState.rawValue
    public var caller: Caller
    /// The channel (message or stream).
    public var channel: ChannelAddress
    /// The keys to remove; empty removes every key.
    public var keys: [String]
    /// Creates the request.
    public init(caller: Caller, channel: ChannelAddress, keys: [String]) {
        self.caller = caller
        self.channel = channel
        self.keys = keys
    }
}

/// Sets keys of a user's temporary state in a channel the user is in, on the server's behalf
/// (its API): as if the user had set them, the other members hearing of it, the user's own
/// sessions included. `presenceUserNotExist` when the user is not in the channel.
public struct SetMemberPresenceState: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Presence.setState.rawValue
    public var caller: Caller
    /// The channel (message or stream).
    public var channel: ChannelAddress
    /// The member whose state changes.
    public var userId: UserID
    /// The keys and values to set (a key given twice is refused).
    public var items: [StateItem]
    /// Creates the request.
    public init(caller: Caller, channel: ChannelAddress, userId: UserID, items: [StateItem]) {
        self.caller = caller
        self.channel = channel
        self.userId = userId
        self.items = items
    }
}

/// The channels of the caller's app that have members now, a page at a time, sorted by type,
/// then name (the server's API).
public struct ListChannels: BusRequest {
    public typealias Response = ChannelPage
    public static let operation = OperationName.Server.channels.rawValue
    public var caller: Caller
    /// `.message` or `.stream`; nil for both.
    public var channelType: RtmChannelType?
    /// The names listed.
    public var pattern: ChannelPattern
    /// The last channel of the previous page; nil for the first page.
    public var after: ChannelAddress?
    /// The most channels on a page.
    public var limit: Int
    /// Creates the query.
    public init(
        caller: Caller, channelType: RtmChannelType? = nil, pattern: ChannelPattern = .any, after: ChannelAddress? = nil,
        limit: Int = 100
    ) {
        self.caller = caller
        self.channelType = channelType
        self.pattern = pattern
        self.after = after
        self.limit = limit
    }
}

/// A page of channels in use.
public struct ChannelPage: Sendable, Hashable {
    /// The channels, sorted by type, then name.
    public var channels: [ChannelSummary]
    /// The last channel listed when more may follow (ask again with it as `after`); nil at the end.
    public var next: ChannelAddress?
    /// Creates a page.
    public init(channels: [ChannelSummary], next: ChannelAddress?) {
        self.channels = channels
        self.next = next
    }
}

/// A channel in use and how many are in it.
public struct ChannelSummary: Sendable, Hashable {
    /// The channel.
    public var channel: ChannelAddress
    /// Sessions in it (subscribed or joined, quiet ones included).
    public var members: Int
    /// Different users among them.
    public var users: Int
    /// Creates a summary.
    public init(channel: ChannelAddress, members: Int, users: Int) {
        self.channel = channel
        self.members = members
        self.users = users
    }
}

/// Channels in use and their members by channel type, in one app or every app together: for the
/// server's `info` and its metrics.
public typealias PresenceStatistics = Statistics<[RtmChannelType: MembershipCount]>

/// Whether users of the caller's app are online, on any device, and when they were last seen.
public struct GetUserPresence: BusRequest {
    public typealias Response = [UserPresence]
    public static let operation = OperationName.Presence.getUserPresence.rawValue
    public var caller: Caller
    /// The users asked about, answered in this order.
    public var userIds: [UserID]
    /// Creates the query.
    public init(caller: Caller, userIds: [UserID]) {
        self.caller = caller
        self.userIds = userIds
    }
}

/// A user's presence across devices and channels.
public struct UserPresence: Sendable, Hashable {
    /// The user id.
    public var userId: UserID
    /// True while the user has a session, connected or waiting for a resume.
    public var online: Bool
    /// Milliseconds since 1970: now for a connected user, when the connection was lost for one
    /// waiting for a resume, when the last session ended for an offline user; 0 when unknown.
    public var lastSeen: UInt64
    /// Creates an entry.
    public init(userId: UserID, online: Bool, lastSeen: UInt64) {
        self.userId = userId
        self.online = online
        self.lastSeen = lastSeen
    }
}

// MARK: Pushes

/// What changed in a channel's occupancy over one interval (`RtmPresenceIntervalInfo`).
public struct PresenceIntervalInfo: Sendable, Hashable {
    /// Users who joined in the interval.
    public var joinUserList: [UserID]
    /// Users who left in the interval.
    public var leaveUserList: [UserID]
    /// Users whose connection timed out in the interval.
    public var timeoutUserList: [UserID]
    /// Users whose state changed in the interval, each with their whole state now.
    public var userStateList: [UserState]
    /// The channel's occupancy at the end of the interval.
    public var totalOccupancy: Int
    /// Creates the info.
    public init(
        joinUserList: [UserID] = [], leaveUserList: [UserID] = [], timeoutUserList: [UserID] = [],
        userStateList: [UserState] = [], totalOccupancy: Int
    ) {
        self.joinUserList = joinUserList
        self.leaveUserList = leaveUserList
        self.timeoutUserList = timeoutUserList
        self.userStateList = userStateList
        self.totalOccupancy = totalOccupancy
    }

    /// An upper bound of the bytes the lists take in a frame.
    public var approximateSize: Int {
        (joinUserList + leaveUserList + timeoutUserList).reduce(64) { $0 + $1.utf8.count + 5 }
            + userStateList.reduce(0) { $0 + $1.approximateSize }
    }
}

/// A presence event as its receivers get it (`RtmPresenceEvent`).
public struct PresenceDelivery: Sendable, Hashable {
    /// What happened.
    public var type: RtmPresenceEventType
    /// The channel type (`.message` or `.stream`).
    public var channelType: RtmChannelType
    /// The channel name.
    public var channelName: String
    /// The user the event is about (for a snapshot, the user who joined; empty for an interval).
    public var publisher: UserID
    /// The publisher's whole state after the event (empty once it left or timed out).
    public var states: [String: String]
    /// For `.snapshot`: the members present, with their states.
    public var snapshot: [UserState]
    /// For `.interval`: what changed over the interval.
    public var interval: PresenceIntervalInfo?
    /// For `.remoteJoinChannel`: this was the user's first connection in the channel; for
    /// `.remoteLeaveChannel` and `.remoteConnectionTimeout`: its last. False otherwise.
    public var firstOrLast: Bool
    /// A large snapshot or interval comes in parts: true on every part but the last.
    public var more: Bool
    /// For `.snapshot`: the channel's occupancy, which may exceed what `snapshot` lists.
    public var totalOccupancy: Int
    /// Server time of the event, milliseconds since 1970.
    public var timestamp: UInt64

    /// Creates an event.
    public init(
        type: RtmPresenceEventType, channelType: RtmChannelType, channelName: String, publisher: UserID,
        states: [String: String] = [:], snapshot: [UserState] = [], interval: PresenceIntervalInfo? = nil,
        firstOrLast: Bool = false, more: Bool = false, totalOccupancy: Int = 0, timestamp: UInt64
    ) {
        self.type = type
        self.channelType = channelType
        self.channelName = channelName
        self.publisher = publisher
        self.states = states
        self.snapshot = snapshot
        self.interval = interval
        self.firstOrLast = firstOrLast
        self.more = more
        self.totalOccupancy = totalOccupancy
        self.timestamp = timestamp
    }

    /// Bytes counted against the resume buffer (an upper bound of the frame's size).
    public var approximateSize: Int {
        96 + channelName.utf8.count + publisher.utf8.count + PresenceSize.of(states)
            + snapshot.reduce(0) { $0 + $1.approximateSize } + (interval?.approximateSize ?? 0)
    }
}

extension PresenceDelivery: PartedEvent {
    /// A snapshot's or interval event's parts: the same type in the same channel.
    public struct PartKey: Hashable, Sendable {
        let type: RtmPresenceEventType
        let channel: ChannelAddress
    }

    public var partKey: PartKey { PartKey(type: type, channel: ChannelAddress(channelType, channelName)) }

    /// Adds the part's users and interval lists; the occupancy is the last part's.
    public mutating func append(part: PresenceDelivery) {
        snapshot += part.snapshot
        totalOccupancy = part.totalOccupancy
        guard let info = part.interval else { return }
        var merged = interval ?? PresenceIntervalInfo(totalOccupancy: 0)
        merged.joinUserList += info.joinUserList
        merged.leaveUserList += info.leaveUserList
        merged.timeoutUserList += info.timeoutUserList
        merged.userStateList += info.userStateList
        merged.totalOccupancy = info.totalOccupancy
        interval = merged
    }
}

/// A member's temporary state in a channel changed: set, updated or removed (published only when
/// someone subscribes to it: the webhooks).
public struct PresenceStateChanged: BusEvent, Hashable {
    /// Whose state.
    public var user: UserKey
    /// The channel, message or stream.
    public var channel: ChannelKey
    /// The whole state as it is now.
    public var states: [String: String]
    /// Creates the event.
    public init(user: UserKey, channel: ChannelKey, states: [String: String]) {
        self.user = user
        self.channel = channel
        self.states = states
    }
}
