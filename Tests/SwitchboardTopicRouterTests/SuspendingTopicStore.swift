import SwitchboardCore
import SwitchboardTestKit
import SwitchboardTopicRouter

/// A topic store that suspends on every call before handing it to an in-memory store: the router
/// must reach its state only through `TopicStore`, and keep its order when the store suspends.
final class SuspendingTopicStore: TopicStore {
    let calls = SuspendingCalls()
    private let base = InMemoryTopicStore()

    func join(_ member: StreamMember, to channel: ChannelKey, limits: Limits) async throws(RtmError) -> [TopicInfo] {
        await calls.pause("join")
        return try base.join(member, to: channel, limits: limits)
    }
    func leave(_ session: SessionID, from channel: ChannelKey) async throws(RtmError) -> StreamDeparture? {
        await calls.pause("leave")
        return base.leave(session, from: channel)
    }
    func leaveAll(_ session: SessionID) async throws(RtmError) -> [StreamDeparture] {
        await calls.pause("leaveAll")
        return base.leaveAll(session)
    }
    func topics(of channel: ChannelKey) async throws(RtmError) -> [TopicInfo] {
        await calls.pause("topics")
        return base.topics(of: channel)
    }
    func joinTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, options: TopicJoinOptions, limits: Limits, operation: String
    ) async throws(RtmError) -> TopicPublisher {
        await calls.pause("joinTopic")
        return try base.joinTopic(session, topic, in: channel, options: options, limits: limits, operation: operation)
    }
    func leaveTopic(_ session: SessionID, _ topic: String, in channel: ChannelKey, operation: String) async throws(RtmError) -> TopicPublisher {
        await calls.pause("leaveTopic")
        return try base.leaveTopic(session, topic, in: channel, operation: operation)
    }
    func publication(
        of session: SessionID, in topic: String, of channel: ChannelKey, operation: String
    ) async throws(RtmError) -> (TopicPublication, receivers: [SessionID]) {
        await calls.pause("publication")
        return try base.publication(of: session, in: topic, of: channel, operation: operation)
    }
    func subscribe(
        _ session: SessionID, to users: [UserID]?, in topic: String, of channel: ChannelKey, limits: Limits, operation: String
    ) async throws(RtmError) -> TopicSubscription {
        await calls.pause("subscribe")
        return try base.subscribe(session, to: users, in: topic, of: channel, limits: limits, operation: operation)
    }
    func receivers(of publisher: UserID, in topic: String, of channel: ChannelKey) async throws(RtmError) -> [SessionID] {
        await calls.pause("receivers")
        return base.receivers(of: publisher, in: topic, of: channel)
    }
    func unsubscribe(
        _ session: SessionID, from users: [UserID]?, in topic: String, of channel: ChannelKey, operation: String
    ) async throws(RtmError) {
        await calls.pause("unsubscribe")
        try base.unsubscribe(session, from: users, in: topic, of: channel, operation: operation)
    }
}
