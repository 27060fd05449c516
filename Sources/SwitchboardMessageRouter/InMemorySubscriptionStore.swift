import Synchronization
import SwitchboardCore

/// The subscription store of one node: a `ChannelRoster` in this process's memory.
public final class InMemorySubscriptionStore: SubscriptionStore {
    private let roster = Mutex(ChannelRoster())

    /// An empty store.
    public init() {}

    public func subscribe(
        _ caller: Caller, to channel: ChannelKey, features: ChannelFeatures, limits: Limits, operation: String
    ) throws(RtmError) -> MembershipChange? {
        try roster.withLock { roster throws(RtmError) in
            if !roster.contains(caller.session, in: channel) {
                guard roster.memberCount(of: channel) < limits.messages.usersPerChannel else {
                    throw RtmError(
                        .channelJoinFailed, operation: operation,
                        reason: "\(channel.name) already has \(limits.messages.usersPerChannel) subscribers")
                }
                guard roster.channelCount(of: caller.session) < limits.messages.subscribedChannelsPerClient else {
                    throw RtmError(
                        .channelInstanceExceedLimitation, operation: operation,
                        reason: "already subscribed to \(limits.messages.subscribedChannelsPerClient) channels")
                }
            }
            return roster.join(caller, channel, features: features)
        }
    }

    public func unsubscribe(_ caller: Caller, from channel: ChannelKey) -> MembershipChange? {
        roster.withLock { $0.leave(caller, channel) }
    }

    public func unsubscribe(_ user: UserKey, from channel: ChannelKey) -> [MembershipChange] {
        roster.withLock { roster in
            roster.members(of: channel).filter { $0.user == user.userId }.compactMap { member in
                roster.leave(Caller(app: user.app, userId: user.userId, session: member.session), channel)
            }
        }
    }

    public func sessionEnded(_ caller: Caller, reason: SessionEndReason) -> [MembershipChange] {
        roster.withLock { $0.end(caller, reason: reason) }
    }
}
