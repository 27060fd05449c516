import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTestKit

/// A subscription store that suspends on every call before handing it to an in-memory store: the
/// router must reach subscriptions only through `SubscriptionStore`, and keep its order when the
/// store suspends.
final class SuspendingSubscriptionStore: SubscriptionStore {
    let calls = SuspendingCalls()
    private let base = InMemorySubscriptionStore()

    func subscribe(
        _ caller: Caller, to channel: ChannelKey, features: ChannelFeatures, limits: Limits, operation: String
    ) async throws(RtmError) -> MembershipChange? {
        await calls.pause("subscribe")
        return try base.subscribe(caller, to: channel, features: features, limits: limits, operation: operation)
    }
    func unsubscribe(_ caller: Caller, from channel: ChannelKey) async throws(RtmError) -> MembershipChange? {
        await calls.pause("unsubscribe")
        return base.unsubscribe(caller, from: channel)
    }
    func unsubscribe(_ user: UserKey, from channel: ChannelKey) async throws(RtmError) -> [MembershipChange] {
        await calls.pause("unsubscribeUser")
        return base.unsubscribe(user, from: channel)
    }
    func sessionEnded(_ caller: Caller, reason: SessionEndReason) async throws(RtmError) -> [MembershipChange] {
        await calls.pause("sessionEnded")
        return base.sessionEnded(caller, reason: reason)
    }
}
