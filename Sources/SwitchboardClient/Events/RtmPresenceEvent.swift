import Foundation
import SwitchboardCore

/// A user and their temporary state in a channel (`AgoraRtmUserState`).
public final class RtmUserState: NSObject, Sendable {
    /// The user id.
    public let userId: String
    /// The user's temporary state in the channel.
    public let states: [String: String]

    /// Creates an entry.
    public init(userId: String, states: [String: String]) {
        self.userId = userId
        self.states = states
    }

    convenience init(_ state: UserState) { self.init(userId: state.userId, states: state.states) }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? RtmUserState else { return false }
        return userId == other.userId && states == other.states
    }

    public override var hash: Int { userId.hashValue }

    public override var description: String { "\(userId) \(states)" }
}

/// What changed in a channel over one interval of interval mode (`AgoraRtmPresenceIntervalInfo`).
public final class RtmPresenceIntervalInfo: NSObject, Sendable {
    /// Users who joined in the interval.
    public let joinUserList: [String]
    /// Users who left in the interval.
    public let leaveUserList: [String]
    /// Users whose connection timed out in the interval.
    public let timeoutUserList: [String]
    /// Users whose state changed in the interval, each with their whole state now.
    public let userStateList: [RtmUserState]
    /// The channel's occupancy (for a snapshot event too).
    public let totalOccupancy: Int

    init(_ info: PresenceIntervalInfo) {
        joinUserList = info.joinUserList
        leaveUserList = info.leaveUserList
        timeoutUserList = info.timeoutUserList
        userStateList = info.userStateList.map(RtmUserState.init)
        totalOccupancy = info.totalOccupancy
    }
}

/// A presence event of a subscribed message channel or a joined stream channel
/// (`AgoraRtmPresenceEvent`).
public final class RtmPresenceEvent: NSObject, Sendable {
    /// What happened.
    public let type: RtmPresenceEventType
    /// The channel type.
    public let channelType: RtmChannelType
    /// The channel name.
    public let channelName: String
    /// The user the event is about (for a snapshot, this client's user; empty for an interval).
    public let publisher: String
    /// The publisher's whole state after the event.
    public let states: [String: String]
    /// For `.interval`, what changed over the interval; empty lists otherwise. For `.snapshot`,
    /// `totalOccupancy` is the channel's occupancy, which may exceed what `snapshot` lists.
    public let interval: RtmPresenceIntervalInfo
    /// For `.snapshot`, the users in the channel with their states (at most 512).
    public let snapshot: [RtmUserState]
    /// Server time of the event, milliseconds since 1970.
    public let timestamp: UInt64
    /// For `.remoteJoinChannel`: this was the user's first connection in the channel (a
    /// Switchboard extension).
    public let isFirstConnection: Bool
    /// For `.remoteLeaveChannel` and `.remoteConnectionTimeout`: this was the user's last
    /// connection in the channel (a Switchboard extension).
    public let isLastConnection: Bool

    /// Creates an event from a push.
    init(_ event: PresenceDelivery) {
        type = event.type
        channelType = event.channelType
        channelName = event.channelName
        publisher = event.publisher
        states = event.states
        interval = RtmPresenceIntervalInfo(event.interval ?? PresenceIntervalInfo(totalOccupancy: event.totalOccupancy))
        snapshot = event.snapshot.map(RtmUserState.init)
        timestamp = event.timestamp
        isFirstConnection = event.type == .remoteJoinChannel && event.firstOrLast
        isLastConnection = (event.type == .remoteLeaveChannel || event.type == .remoteConnectionTimeout) && event.firstOrLast
    }
}
