import SwitchboardCore
import SwitchboardWire

/// The stream-channel feature: channel join, leave and token renewal, topics, topic messages and
/// topic subscriptions, as topic-router requests.
enum StreamBinding: FeatureBinding {
    /// Topic messages are bounded per topic by the topic router (200/s), not by the client's
    /// 60 publishes/s for message channels, which would cap a topic below its own limit.
    static func answer(_ operation: StreamOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        switch operation {
        case .join(let channel, let token, let features):
            _ = try await bus.request(JoinStreamChannel(caller: caller, channelName: channel, token: token, features: features))
        case .leave(let channel):
            _ = try await bus.request(LeaveStreamChannel(caller: caller, channelName: channel))
        case .renewChannelToken(let channel, let token):
            _ = try await bus.request(RenewStreamChannelToken(caller: caller, channelName: channel, token: token))
        case .joinTopic(let channel, let topic, let options):
            _ = try await bus.request(JoinTopic(caller: caller, channelName: channel, topic: topic, options: options))
        case .leaveTopic(let channel, let topic):
            _ = try await bus.request(LeaveTopic(caller: caller, channelName: channel, topic: topic))
        case .publishTopicMessage(let channel, let topic, let message, let customType, let sendTs):
            _ = try await bus.request(
                PublishTopicMessage(
                    caller: caller, channelName: channel, topic: topic, payload: message, customType: customType,
                    sendTs: sendTs))
        case .subscribeTopic(let channel, let topic, let users):
            return .stream(
                .subscribeTopic(try await bus.request(SubscribeTopic(caller: caller, channelName: channel, topic: topic, users: users))))
        case .unsubscribeTopic(let channel, let topic, let users):
            _ = try await bus.request(UnsubscribeTopic(caller: caller, channelName: channel, topic: topic, users: users))
        }
        return .done
    }
}
