import SwitchboardCore

/// Where the message router keeps message-channel subscriptions, every channel keyed by app.
///
/// The store recipe (Modules.md): each method is one atomic check-and-change that returns what it
/// changed, the shape a shared store needs (one script per call in Redis). The router calls it
/// one operation at a time, applies each change to the view its publishes read (`Routes`) and
/// publishes `ChannelJoined` / `ChannelLeft` in the store's order. Errors carry the reference's
/// codes and the operation passed in.
public protocol SubscriptionStore: Sendable {
    /// Subscribes `caller` to `channel` with `features`, or changes the features of its
    /// subscription; nil when it had these features already. Throws `channelJoinFailed` past the
    /// users per channel, `channelInstanceExceedLimitation` past the subscriptions per client.
    func subscribe(
        _ caller: Caller, to channel: ChannelKey, features: ChannelFeatures, limits: Limits, operation: String
    ) async throws(RtmError) -> MembershipChange?

    /// Ends `caller`'s subscription to `channel`; nil when it had none.
    func unsubscribe(_ caller: Caller, from channel: ChannelKey) async throws(RtmError) -> MembershipChange?

    /// Ends the subscriptions of every session of `user` to `channel`; none when it had none.
    func unsubscribe(_ user: UserKey, from channel: ChannelKey) async throws(RtmError) -> [MembershipChange]

    /// Ends every subscription of `caller`'s session, which ended for `reason`, by channel name.
    func sessionEnded(_ caller: Caller, reason: SessionEndReason) async throws(RtmError) -> [MembershipChange]
}
