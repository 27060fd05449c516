import SwitchboardCore
import SwitchboardWire

extension RtmClientKit {
    /// The storage API: channel and user metadata (`getStorage()`).
    public func getStorage() -> RtmStorage? { RtmStorage(kit: self) }
}

/// Channel and user metadata (`AgoraRtmStorage`), each call in the reference's async and
/// completion-block forms. With client-side encryption on, values are sealed before they leave
/// and opened when they arrive; keys stay readable.
public final class RtmStorage: Sendable {
    let kit: RtmClientKit

    init(kit: RtmClientKit) { self.kit = kit }

    // MARK: Channel metadata

    /// Sets channel metadata items: new keys are added, existing ones overwritten.
    public func setChannelMetadata(
        channelName: String, channelType: RtmChannelType, data: RtmMetadata, options: RtmMetadataOptions?, lock: String?
    ) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await channelWrite(.set, channelName, channelType, data, options, lock).result()
    }

    /// Sets channel metadata items, calling `completionBlock` when done.
    public func setChannelMetadata(
        channelName: String, channelType: RtmChannelType, data: RtmMetadata, options: RtmMetadataOptions?, lock: String?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        channelWrite(.set, channelName, channelType, data, options, lock).complete(completionBlock)
    }

    /// Updates channel metadata items that exist.
    public func updateChannelMetadata(
        channelName: String, channelType: RtmChannelType, data: RtmMetadata, options: RtmMetadataOptions?, lock: String?
    ) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await channelWrite(.update, channelName, channelType, data, options, lock).result()
    }

    /// Updates channel metadata items, calling `completionBlock` when done.
    public func updateChannelMetadata(
        channelName: String, channelType: RtmChannelType, data: RtmMetadata, options: RtmMetadataOptions?, lock: String?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        channelWrite(.update, channelName, channelType, data, options, lock).complete(completionBlock)
    }

    /// Removes channel metadata items, or the whole set when `data` has no items.
    public func removeChannelMetadata(
        channelName: String, channelType: RtmChannelType, data: RtmMetadata, options: RtmMetadataOptions?, lock: String?
    ) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await channelWrite(.remove, channelName, channelType, data, options, lock).result()
    }

    /// Removes channel metadata items, calling `completionBlock` when done.
    public func removeChannelMetadata(
        channelName: String, channelType: RtmChannelType, data: RtmMetadata, options: RtmMetadataOptions?, lock: String?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        channelWrite(.remove, channelName, channelType, data, options, lock).complete(completionBlock)
    }

    /// The metadata of a channel.
    public func getChannelMetadata(channelName: String, channelType: RtmChannelType) async
        -> (RtmGetMetadataResponse?, RtmErrorInfo?)
    {
        await read(.getChannel(channelType: channelType, channel: channelName)).result()
    }

    /// The metadata of a channel, handed to `completionBlock`.
    public func getChannelMetadata(
        channelName: String, channelType: RtmChannelType, completion completionBlock: RtmGetMetadataBlock? = nil
    ) {
        read(.getChannel(channelType: channelType, channel: channelName)).complete(completionBlock)
    }

    // MARK: User metadata

    /// Sets user metadata items: new keys are added, existing ones overwritten.
    public func setUserMetadata(userId: String, data: RtmMetadata, options: RtmMetadataOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await userWrite(.set, userId, data, options).result()
    }

    /// Sets user metadata items, calling `completionBlock` when done.
    public func setUserMetadata(
        userId: String, data: RtmMetadata, options: RtmMetadataOptions?, completion completionBlock: RtmOperationBlock? = nil
    ) {
        userWrite(.set, userId, data, options).complete(completionBlock)
    }

    /// Updates user metadata items that exist.
    public func updateUserMetadata(userId: String, data: RtmMetadata, options: RtmMetadataOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await userWrite(.update, userId, data, options).result()
    }

    /// Updates user metadata items, calling `completionBlock` when done.
    public func updateUserMetadata(
        userId: String, data: RtmMetadata, options: RtmMetadataOptions?, completion completionBlock: RtmOperationBlock? = nil
    ) {
        userWrite(.update, userId, data, options).complete(completionBlock)
    }

    /// Removes user metadata items, or the whole set when `data` has no items.
    public func removeUserMetadata(userId: String, data: RtmMetadata, options: RtmMetadataOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await userWrite(.remove, userId, data, options).result()
    }

    /// Removes user metadata items, calling `completionBlock` when done.
    public func removeUserMetadata(
        userId: String, data: RtmMetadata, options: RtmMetadataOptions?, completion completionBlock: RtmOperationBlock? = nil
    ) {
        userWrite(.remove, userId, data, options).complete(completionBlock)
    }

    /// The metadata of a user.
    public func getUserMetadata(userId: String) async -> (RtmGetMetadataResponse?, RtmErrorInfo?) {
        await read(.getUser(userId: userId)).result()
    }

    /// The metadata of a user, handed to `completionBlock`.
    public func getUserMetadata(userId: String, completion completionBlock: RtmGetMetadataBlock? = nil) {
        read(.getUser(userId: userId)).complete(completionBlock)
    }

    /// Hears about a user's metadata: a snapshot now, the whole set after each change.
    public func subscribeUserMetadata(userId: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await subscription(userId, subscribe: true).result()
    }

    /// Subscribes to a user's metadata, calling `completionBlock` when done.
    public func subscribeUserMetadata(userId: String, completion completionBlock: RtmOperationBlock? = nil) {
        subscription(userId, subscribe: true).complete(completionBlock)
    }

    /// Stops hearing about a user's metadata.
    public func unsubscribeUserMetadata(userId: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await subscription(userId, subscribe: false).result()
    }

    /// Unsubscribes from a user's metadata, calling `completionBlock` when done.
    public func unsubscribeUserMetadata(userId: String, completion completionBlock: RtmOperationBlock? = nil) {
        subscription(userId, subscribe: false).complete(completionBlock)
    }

    // MARK: Calls

    private func channelWrite(
        _ kind: MetadataWriteKind, _ channel: String, _ channelType: RtmChannelType, _ data: RtmMetadata,
        _ options: RtmMetadataOptions?, _ lock: String?
    ) -> RtmCall<RtmCommonResponse> {
        let (metadata, written, sealer) = (data.written, (options ?? RtmMetadataOptions()).written, kit.sealer)
        return kit.call(channel: channel) { () throws(RtmErrorInfo) in
            let sealed = try sealer?.sealValues(metadata) ?? metadata
            return .storage(.writeChannel(kind, channelType: channelType, channel: channel, data: sealed, options: written, lock: lock))
        }
    }

    private func userWrite(
        _ kind: MetadataWriteKind, _ userId: String, _ data: RtmMetadata, _ options: RtmMetadataOptions?
    ) -> RtmCall<RtmCommonResponse> {
        let (metadata, written, sealer) = (data.written, (options ?? RtmMetadataOptions()).written, kit.sealer)
        return kit.call { () throws(RtmErrorInfo) in
            let sealed = try sealer?.sealValues(metadata) ?? metadata
            return .storage(.writeUser(kind, userId: userId, data: sealed, options: written))
        }
    }

    private func read(_ operation: StorageOperation) -> RtmCall<RtmGetMetadataResponse> {
        let (sealer, log) = (kit.sealer, kit.engine.log)
        return kit.call({ .storage(operation) }) { answer throws(RtmErrorInfo) in
            let metadata: Metadata
            switch answer {
            case .storage(.channelMetadata(let data)), .storage(.userMetadata(let data)): metadata = data
            default: throw RtmErrorInfo(.invalidParameter, operation: operation.name, reason: "unexpected answer")
            }
            guard let sealer else { return RtmGetMetadataResponse(metadata) }
            let (opened, sealedKeys) = sealer.openValues(metadata)
            if !sealedKeys.isEmpty {
                log?.write(.warn, "\(operation.name): the values of \(sealedKeys.sorted()) do not open under this client's key; left sealed")
            }
            return RtmGetMetadataResponse(opened, sealedKeys: sealedKeys)
        }
    }

    private func subscription(_ userId: String, subscribe: Bool) -> RtmCall<RtmCommonResponse> {
        let subscriptions = kit.userMetadataSubscriptions
        let operation: StorageOperation = subscribe ? .subscribeUser(userId: userId) : .unsubscribeUser(userId: userId)
        return kit.call({ .storage(operation) }) { _ in
            if subscribe { subscriptions.add(userId) } else { subscriptions.remove(userId) }
            return RtmCommonResponse()
        }
    }
}

/// The users whose metadata a client subscribes to: what a new session after a lost one
/// subscribes to again.
final class UserMetadataSubscriptions: RestorableState {
    /// A cluster node that takes a session over does not know its users' metadata subscriptions:
    /// they are made again.
    var movesWithSession: Bool { false }

    private let users = Locked<Set<String>>([])

    func add(_ userId: String) { users.withLock { _ = $0.insert(userId) } }

    func remove(_ userId: String) { users.withLock { _ = $0.remove(userId) } }

    /// None: users are not channels.
    var channels: [String] { [] }

    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String] {
        for userId in users.withLock({ $0.sorted() }) { _ = await send(.storage(.subscribeUser(userId: userId))) }
        return []
    }

    func reset() { users.withLock { $0.removeAll() } }
}
