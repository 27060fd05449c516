import Foundation
import SwitchboardCore
import SwitchboardWire

/// A stream channel (`AgoraRtmStreamChannel`): join it, publish in its topics, subscribe to the
/// publishers of its topics. Made by `RtmClientKit.createStreamChannel`.
///
/// It shares the client's connection and session (see Modules.md): the link events it reports
/// have service type `stream` and name this channel. A lost session is rebuilt on reconnect: the
/// channel is joined again, with its topics and subscriptions.
public final class RtmStreamChannel: NSObject, Sendable {
    let kit: RtmClientKit
    /// The channel's name.
    public let channelName: String
    private let destroyed = Locked(false)

    init(kit: RtmClientKit, channelName: String) {
        self.kit = kit
        self.channelName = channelName
    }

    /// The channel's name.
    public func getChannelName() -> String { channelName }

    // MARK: The channel

    /// Joins the channel with `option.token` (the RTC token) and `option.features`.
    public func join(_ option: RtmJoinChannelOption) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await joinCall(option).result()
    }

    /// Joins the channel, calling `completionBlock` when done.
    public func join(_ option: RtmJoinChannelOption, completion completionBlock: RtmOperationBlock? = nil) {
        joinCall(option).complete(completionBlock)
    }

    /// Leaves the channel: its topics and subscriptions end.
    public func leave() async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await leaveCall().result()
    }

    /// Leaves the channel, calling `completionBlock` when done.
    public func leave(_ completionBlock: RtmOperationBlock? = nil) {
        leaveCall().complete(completionBlock)
    }

    /// Replaces the channel's RTC token; the new one is used to rejoin after a lost session.
    public func renewToken(_ token: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await renewCall(token).result()
    }

    /// Replaces the channel's RTC token, calling `completionBlock` when done.
    public func renewToken(_ token: String, completion completionBlock: RtmOperationBlock? = nil) {
        renewCall(token).complete(completionBlock)
    }

    /// Releases the instance, leaving the channel first if it is joined. Later calls fail.
    @discardableResult
    public func destroy() -> RtmErrorCode {
        guard !destroyed.exchange(true) else { return .ok }
        if kit.streamChannels.isJoined(channelName) { leaveCall(checked: false).complete(nil) }
        kit.streamChannels.release(channelName)
        return .ok
    }

    // MARK: Topics

    /// Becomes a publisher of `topic`.
    public func joinTopic(_ topic: String, option: RtmJoinTopicOption?) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await joinTopicCall(topic, option).result()
    }

    /// Becomes a publisher of `topic`, calling `completionBlock` when done.
    public func joinTopic(_ topic: String, option: RtmJoinTopicOption?, completion completionBlock: RtmOperationBlock? = nil) {
        joinTopicCall(topic, option).complete(completionBlock)
    }

    /// Stops publishing in `topic`.
    public func leaveTopic(_ topic: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await leaveTopicCall(topic).result()
    }

    /// Stops publishing in `topic`, calling `completionBlock` when done.
    public func leaveTopic(_ topic: String, completion completionBlock: RtmOperationBlock? = nil) {
        leaveTopicCall(topic).complete(completionBlock)
    }

    /// Publishes a string in a joined topic.
    public func publishTopicMessage(topic: String, message: String, option options: RtmTopicMessageOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await publishCall(topic, .string(message), options).result()
    }

    /// Publishes a string in a joined topic, calling `completionBlock` when done.
    public func publishTopicMessage(
        topic: String, message: String, option options: RtmTopicMessageOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        publishCall(topic, .string(message), options).complete(completionBlock)
    }

    /// Publishes binary data in a joined topic.
    public func publishTopicMessage(topic: String, data: Data, option options: RtmTopicMessageOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await publishCall(topic, .binary(Array(data)), options).result()
    }

    /// Publishes binary data in a joined topic, calling `completionBlock` when done.
    public func publishTopicMessage(
        topic: String, data: Data, option options: RtmTopicMessageOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        publishCall(topic, .binary(Array(data)), options).complete(completionBlock)
    }

    /// Subscribes to publishers of `topic`: `option.users`, or the current ones (up to 64).
    public func subscribeTopic(_ topic: String, option: RtmTopicOption?) async
        -> (RtmTopicSubscriptionResponse?, RtmErrorInfo?)
    {
        await subscribeCall(topic, option).result()
    }

    /// Subscribes to publishers of `topic`, calling `completionBlock` when done.
    public func subscribeTopic(
        _ topic: String, option: RtmTopicOption?, completion completionBlock: RtmTopicSubscriptionBlock? = nil
    ) {
        subscribeCall(topic, option).complete(completionBlock)
    }

    /// Unsubscribes from `option.users` of `topic`, or from the whole topic.
    public func unsubscribeTopic(_ topic: String, option: RtmTopicOption?) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await unsubscribeCall(topic, option).result()
    }

    /// Unsubscribes from publishers of `topic`, calling `completionBlock` when done.
    public func unsubscribeTopic(_ topic: String, option: RtmTopicOption?, completion completionBlock: RtmOperationBlock? = nil) {
        unsubscribeCall(topic, option).complete(completionBlock)
    }

    // MARK: Calls

    /// Joins the channel. A join made while an earlier one of this channel waits for its answer
    /// cancels that one (it gets `channelJoinCanceled`, -11034, as the reference's second `login`
    /// cancels the first): this one waits for the earlier's answer, then joins with its own token
    /// and features, leaving first only when the earlier join got in with others. States set for
    /// the channel before the join go to the server before the join is answered.
    private func joinCall(_ option: RtmJoinChannelOption) -> RtmCall<RtmCommonResponse> {
        let (name, token, features) = (channelName, option.token ?? "", option.features)
        let (channels, states, link) = (kit.streamChannels, kit.presenceStates, StreamLinkReporter(dispatcher: kit.dispatcher, channel: name))
        return RtmCall(kit: kit) { [self] engine, resolve in
            do throws(RtmErrorInfo) {
                try checkAlive(.join)
            } catch {
                return resolve(.failure(error))
            }
            let attempt = channels.beginJoin(name) {
                resolve(.failure(RtmErrorInfo(.channelJoinCanceled, operation: OperationName.Stream.join, reason: "a newer join of \(name) replaced it")))
            }
            if attempt.earlier == nil { link.report(.idle, .connecting, .join, .join) }
            if let earlier = attempt.earlier, let joined = await earlier.value {
                guard joined.token != token || joined.features != features else {
                    // The canceled join got in with this join's own options: nothing more to send.
                    attempt.answered.fulfil(joined)
                    guard channels.endJoin(name, attempt.ticket) else { return }
                    await states.sendPending(ChannelAddress(.stream, name), on: engine)
                    link.report(.connecting, .connected, .join, .joinSuccess)
                    return resolve(.success(RtmCommonResponse(channelName: name)))
                }
                let left = OneShot<Result<Answer, RtmErrorInfo>>()
                await engine.call(.stream(.leave(channel: name))) { left.fulfil($0) }
                if case .success = await left.value { channels.left(name) }
            }
            await engine.call(.stream(.join(channel: name, token: token, features: features))) { outcome in
                let current = channels.endJoin(name, attempt.ticket)
                guard case .success = outcome else {
                    attempt.answered.fulfil(nil)
                    guard current else { return }
                    link.report(.connecting, .failed, .join, .joinFailed)
                    return resolve(outcome.map { _ in RtmCommonResponse(channelName: name) })
                }
                channels.joined(name, token: token, features: features)
                attempt.answered.fulfil(StreamChannels.JoinedWith(token: token, features: features))
                guard current else { return }
                Task {
                    await states.sendPending(ChannelAddress(.stream, name), on: engine)
                    link.report(.connecting, .connected, .join, .joinSuccess)
                    resolve(.success(RtmCommonResponse(channelName: name)))
                }
            }
        }
    }

    private func leaveCall(checked: Bool = true) -> RtmCall<RtmCommonResponse> {
        let name = channelName
        let (channels, states, link) = (kit.streamChannels, kit.presenceStates, StreamLinkReporter(dispatcher: kit.dispatcher, channel: name))
        return channelCall({ [self] () throws(RtmErrorInfo) in
            if checked { try checkAlive(.leave) }
            return .stream(.leave(channel: name))
        }) {
            channels.left(name)
            states.forget(ChannelAddress(.stream, name))
            link.report(.connected, .idle, .leave, .leave)
        }
    }

    private func renewCall(_ token: String) -> RtmCall<RtmCommonResponse> {
        let (name, channels) = (channelName, kit.streamChannels)
        return channelCall({ [self] () throws(RtmErrorInfo) in
            try checkAlive(.renewToken)
            return .stream(.renewChannelToken(channel: name, token: token))
        }) { channels.update(name) { $0.token = token } }
    }

    private func joinTopicCall(_ topic: String, _ option: RtmJoinTopicOption?) -> RtmCall<RtmCommonResponse> {
        let (name, channels) = (channelName, kit.streamChannels)
        let options = TopicJoinOptions(
            qos: option?.qos ?? .unordered, priority: option?.priority ?? .normal, meta: option?.meta ?? "",
            syncWithMedia: option?.syncWithMedia ?? false)
        return channelCall({ [self] () throws(RtmErrorInfo) in
            try checkAlive(.joinTopic)
            return .stream(.joinTopic(channel: name, topic: topic, options: options))
        }) { channels.update(name) { $0.topics[topic] = options } }
    }

    private func leaveTopicCall(_ topic: String) -> RtmCall<RtmCommonResponse> {
        let (name, channels) = (channelName, kit.streamChannels)
        return channelCall({ [self] () throws(RtmErrorInfo) in
            try checkAlive(.leaveTopic)
            return .stream(.leaveTopic(channel: name, topic: topic))
        }) { channels.update(name) { $0.topics[topic] = nil } }
    }

    private func publishCall(_ topic: String, _ payload: MessagePayload, _ options: RtmTopicMessageOptions?) -> RtmCall<RtmCommonResponse> {
        let (name, sealer) = (channelName, kit.sealer)
        let (customType, sendTs) = (options?.customType ?? "", options?.sendTs ?? 0)
        return channelCall({ [self] () throws(RtmErrorInfo) in
            try checkAlive(.publishTopicMessage)
            let body = try sealer?.seal(payload) ?? payload
            return .stream(.publishTopicMessage(channel: name, topic: topic, message: body, customType: customType, sendTs: sendTs))
        }) {}
    }

    private func subscribeCall(_ topic: String, _ option: RtmTopicOption?) -> RtmCall<RtmTopicSubscriptionResponse> {
        let (name, channels, users) = (channelName, kit.streamChannels, option?.users)
        return kit.call({ [self] () throws(RtmErrorInfo) in
            try checkAlive(.subscribeTopic)
            return .stream(.subscribeTopic(channel: name, topic: topic, users: users))
        }) { answer throws(RtmErrorInfo) in
            guard let subscription = ServerFrame.answer(id: 0, answer).topicSubscription else {
                throw RtmErrorInfo(.invalidParameter, operation: OperationName.Stream.subscribeTopic, reason: "unexpected answer")
            }
            channels.update(name) { $0.subscriptions[topic, default: []].formUnion(subscription.succeedUsers) }
            return RtmTopicSubscriptionResponse(succeedUsers: subscription.succeedUsers, failedUsers: subscription.failedUsers)
        }
    }

    private func unsubscribeCall(_ topic: String, _ option: RtmTopicOption?) -> RtmCall<RtmCommonResponse> {
        let (name, channels, users) = (channelName, kit.streamChannels, option?.users)
        return channelCall({ [self] () throws(RtmErrorInfo) in
            try checkAlive(.unsubscribeTopic)
            return .stream(.unsubscribeTopic(channel: name, topic: topic, users: users))
        }) {
            channels.update(name) { membership in
                if let users { membership.subscriptions[topic]?.subtract(users) } else { membership.subscriptions[topic] = nil }
                if membership.subscriptions[topic]?.isEmpty == true { membership.subscriptions[topic] = nil }
            }
        }
    }

    /// A call answered with the common response for this channel, running `succeeded` first.
    private func channelCall(
        _ operation: @escaping @Sendable () throws(RtmErrorInfo) -> ClientOperation, succeeded: @escaping @Sendable () -> Void
    ) -> RtmCall<RtmCommonResponse> {
        let name = channelName
        return kit.call(operation) { _ in
            succeeded()
            return RtmCommonResponse(channelName: name)
        }
    }

    private func checkAlive(_ operation: OperationName.Stream) throws(RtmErrorInfo) {
        guard !destroyed.load() else {
            throw RtmErrorInfo(.instanceAlreadyReleased, operation: operation, reason: "the stream channel was destroyed")
        }
    }
}

/// Reports the link events of one stream channel's service.
struct StreamLinkReporter: Sendable {
    let dispatcher: EventDispatcher
    let channel: String

    func report(_ previous: RtmLinkState, _ current: RtmLinkState, _ operation: RtmLinkOperation, _ reason: RtmLinkStateChangeReason) {
        dispatcher.emit(
            .linkState(
                RtmLinkStateEvent(
                    currentState: current, previousState: previous, serviceType: .stream, operation: operation,
                    reasonCode: reason, affectedChannels: [channel],
                    timestamp: UInt64(Date().timeIntervalSince1970 * 1000))))
    }
}
