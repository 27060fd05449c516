import Foundation
import SwitchboardCore
import SwitchboardWire

/// Message channels and user channels: subscribe, unsubscribe, publish.
extension RtmClientKit {
    /// Subscribes to a message channel; `option.features` defaults to `[.message, .presence]`.
    public func subscribe(channelName: String, option subscribeOption: RtmSubscribeOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await subscribeCall(channelName, subscribeOption).result()
    }

    /// Subscribes to a message channel, calling `completionBlock` when done.
    public func subscribe(
        channelName: String, option subscribeOption: RtmSubscribeOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        subscribeCall(channelName, subscribeOption).complete(completionBlock)
    }

    /// Unsubscribes from a message channel.
    public func unsubscribe(_ channelName: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await unsubscribeCall(channelName).result()
    }

    /// Unsubscribes from a message channel, calling `completionBlock` when done.
    public func unsubscribe(_ channelName: String, completion completionBlock: RtmOperationBlock? = nil) {
        unsubscribeCall(channelName).complete(completionBlock)
    }

    /// Publishes a string on a message channel, or sends it to a user (`option.channelType = .user`).
    public func publish(channelName: String, message: String, option publishOption: RtmPublishOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await publishCall(channelName, .string(message), publishOption).result()
    }

    /// Publishes a string, calling `completionBlock` when done.
    public func publish(
        channelName: String, message: String, option publishOption: RtmPublishOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        publishCall(channelName, .string(message), publishOption).complete(completionBlock)
    }

    /// Publishes binary data on a message channel, or sends it to a user.
    public func publish(channelName: String, data: Data, option publishOption: RtmPublishOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await publishCall(channelName, .binary(Array(data)), publishOption).result()
    }

    /// Publishes binary data, calling `completionBlock` when done.
    public func publish(
        channelName: String, data: Data, option publishOption: RtmPublishOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        publishCall(channelName, .binary(Array(data)), publishOption).complete(completionBlock)
    }

    private func subscribeCall(_ channel: String, _ option: RtmSubscribeOptions?) -> RtmCall<RtmCommonResponse> {
        let (features, settings) = (option?.features ?? .defaultFeatures, settings)
        let subscriptions = subscriptions
        return call({ () throws(RtmErrorInfo) in
            try settings.checkService(.message, OperationName.Messages.subscribe.rawValue)
            return .channel(.subscribe(channel: channel, features: features))
        }) { _ in
            subscriptions.add(channel, features)
            return RtmCommonResponse(channelName: channel)
        }.followed { [presenceStates] engine in await presenceStates.sendPending(ChannelAddress(.message, channel), on: engine) }
    }

    private func unsubscribeCall(_ channel: String) -> RtmCall<RtmCommonResponse> {
        let (subscriptions, presenceStates) = (subscriptions, presenceStates)
        return call({ .channel(.unsubscribe(channel: channel)) }) { _ in
            subscriptions.remove(channel)
            presenceStates.forget(ChannelAddress(.message, channel))
            return RtmCommonResponse(channelName: channel)
        }
    }

    private func publishCall(
        _ channel: String, _ payload: MessagePayload, _ option: RtmPublishOptions?
    ) -> RtmCall<RtmCommonResponse> {
        let channelType = option?.channelType ?? .message
        let customType = option?.customType ?? ""
        let (sealer, settings) = (sealer, settings)
        return call(channel: channel) { () throws(RtmErrorInfo) in
            if channelType == .message { try settings.checkService(.message, OperationName.Messages.publish.rawValue) }
            let body = try sealer?.seal(payload) ?? payload
            return .channel(.publish(channelType: channelType, channel: channel, message: body, customType: customType))
        }
    }
}

/// The message channels a client is subscribed to, with their features: what a new session after
/// a lost one subscribes to again.
final class ChannelSubscriptions: RestorableState {
    private let features = Locked<[String: RtmSubscribeChannelFeature]>([:])

    func add(_ channel: String, _ channelFeatures: RtmSubscribeChannelFeature) {
        features.withLock { $0[channel] = channelFeatures }
    }

    func remove(_ channel: String) { features.withLock { _ = $0.removeValue(forKey: channel) } }

    var channels: [String] { features.withLock { Array($0.keys) } }

    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String] {
        var unrestored: [String] = []
        for (channel, channelFeatures) in features.withLock({ $0.sorted { $0.key < $1.key } }) {
            if case .failure = await send(.channel(.subscribe(channel: channel, features: channelFeatures))) {
                unrestored.append(channel)
            }
        }
        return unrestored
    }

    func reset() { features.withLock { $0.removeAll() } }
}
