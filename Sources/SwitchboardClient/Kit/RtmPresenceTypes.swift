import Foundation
import SwitchboardCore

/// Options of `getOnlineUsers` (`AgoraRtmGetOnlineUsersOptions`).
public final class RtmGetOnlineUsersOptions: NSObject {
    /// Whether the result lists the users' ids; `true` by default.
    public var includeUserId = true
    /// Whether the result lists the users' states; `false` by default.
    public var includeState = false
    /// The `nextPage` of an earlier result; empty for the first page.
    public var page = ""
    /// Creates the defaults.
    public override init() {}
}

/// One page of a channel's online users (`AgoraRtmGetOnlineUsersResponse`).
public final class RtmGetOnlineUsersResponse: NSObject, Sendable {
    /// The length of `userStateList`; the channel's occupancy when neither ids nor states were asked for.
    public let totalOccupancy: Int
    /// The users on this page, in join order.
    public let userStateList: [RtmUserState]
    /// The page to ask for next; nil when this was the last.
    public let nextPage: String?

    init(_ page: WhoNowPage) {
        totalOccupancy = page.totalOccupancy
        userStateList = page.users.map(RtmUserState.init)
        nextPage = page.nextPage.isEmpty ? nil : page.nextPage
    }
}

/// A channel's name and type (`AgoraRtmChannelInfo`).
public final class RtmChannelInfo: NSObject, Sendable {
    /// The channel name.
    public let channelName: String
    /// The channel type.
    public let channelType: RtmChannelType

    init(_ address: ChannelAddress) {
        channelName = address.name
        channelType = address.type
    }
}

/// The channels a user is in (`AgoraRtmGetUserChannelsResponse`).
public final class RtmGetUserChannelsResponse: NSObject, Sendable {
    /// How many channels.
    public let totalChannel: Int32
    /// The channels, by type then name.
    public let channels: [RtmChannelInfo]

    init(_ channels: [ChannelAddress]) {
        totalChannel = Int32(clamping: channels.count)
        self.channels = channels.map(RtmChannelInfo.init)
    }
}

/// A user's state in a channel (`AgoraRtmPresenceGetStateResponse`).
public final class RtmPresenceGetStateResponse: NSObject, Sendable {
    /// The user and the state.
    public let state: RtmUserState

    init(_ state: UserState) { self.state = RtmUserState(state) }
}

/// Whether a user is online on any device, and when it was last seen (a Switchboard extension).
public final class RtmUserPresence: NSObject, Sendable {
    /// The user id.
    public let userId: String
    /// True while the user has a session, connected or waiting for a resume.
    public let isOnline: Bool
    /// Milliseconds since 1970: now for a connected user, when the connection was lost for one
    /// waiting for a resume, when it went offline otherwise; 0 when the server does not know.
    public let lastSeen: UInt64

    init(_ presence: UserPresence) {
        userId = presence.userId
        isOnline = presence.online
        lastSeen = presence.lastSeen
    }
}

/// The answer of `getUserPresence` (a Switchboard extension).
public final class RtmGetUserPresenceResponse: NSObject, Sendable {
    /// One entry per user asked about, in the order asked.
    public let users: [RtmUserPresence]

    init(_ users: [UserPresence]) { self.users = users.map(RtmUserPresence.init) }
}

/// Options of `whoNow` (`AgoraRtmPresenceOptions`): the newer name of `RtmGetOnlineUsersOptions`.
public typealias RtmPresenceOptions = RtmGetOnlineUsersOptions
/// The answer of `whoNow` (`AgoraRtmWhoNowResponse`): the newer name of `RtmGetOnlineUsersResponse`.
public typealias RtmWhoNowResponse = RtmGetOnlineUsersResponse
/// The answer of `whereNow` (`AgoraRtmWhereNowResponse`): the newer name of `RtmGetUserChannelsResponse`.
public typealias RtmWhereNowResponse = RtmGetUserChannelsResponse

/// The completion block of `getOnlineUsers`.
public typealias RtmGetOnlineUsersBlock = @Sendable (RtmGetOnlineUsersResponse?, RtmErrorInfo?) -> Void
/// The completion block of `whoNow`.
public typealias RtmWhoNowBlock = RtmGetOnlineUsersBlock
/// The completion block of `getUserChannels`.
public typealias RtmGetUserChannelsBlock = @Sendable (RtmGetUserChannelsResponse?, RtmErrorInfo?) -> Void
/// The completion block of `whereNow`.
public typealias RtmWhereNowBlock = RtmGetUserChannelsBlock
/// The completion block of `getState`.
public typealias RtmPresenceGetStateBlock = @Sendable (RtmPresenceGetStateResponse?, RtmErrorInfo?) -> Void
/// The completion block of `getUserPresence`.
public typealias RtmGetUserPresenceBlock = @Sendable (RtmGetUserPresenceResponse?, RtmErrorInfo?) -> Void
