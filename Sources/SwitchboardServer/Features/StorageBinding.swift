import SwitchboardCore
import SwitchboardWire

/// The storage feature: channel and user metadata and user-metadata subscriptions, as storage
/// requests, every one on the storage rate budget.
enum StorageBinding: FeatureBinding {
    static let unavailable: RtmErrorCode? = .storageNotAvailable

    static func answer(_ operation: StorageOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        switch operation {
        case .writeChannel(let kind, let channelType, let channel, let data, let options, let lock):
            switch kind {
            case .set: _ = try await bus.request(channelWrite(SetChannelMetadata.self))
            case .update: _ = try await bus.request(channelWrite(UpdateChannelMetadata.self))
            case .remove: _ = try await bus.request(channelWrite(RemoveChannelMetadata.self))
            }
            func channelWrite<R: ChannelMetadataWrite>(_ type: R.Type) -> R {
                R(caller: caller, channelType: channelType, channelName: channel, data: data, options: options, lockName: lock)
            }
        case .getChannel(let channelType, let channel):
            return .storage(
                .channelMetadata(try await bus.request(GetChannelMetadata(caller: caller, channelType: channelType, channelName: channel))))
        case .writeUser(let kind, let userId, let data, let options):
            switch kind {
            case .set: _ = try await bus.request(SetUserMetadata(caller: caller, userId: userId, data: data, options: options))
            case .update: _ = try await bus.request(UpdateUserMetadata(caller: caller, userId: userId, data: data, options: options))
            case .remove: _ = try await bus.request(RemoveUserMetadata(caller: caller, userId: userId, data: data, options: options))
            }
        case .getUser(let userId):
            return .storage(.userMetadata(try await bus.request(GetUserMetadata(caller: caller, userId: userId))))
        case .subscribeUser(let userId):
            _ = try await bus.request(SubscribeUserMetadata(caller: caller, userId: userId))
        case .unsubscribeUser(let userId):
            _ = try await bus.request(UnsubscribeUserMetadata(caller: caller, userId: userId))
        }
        return .done
    }
}
