/// Makes sure the changes other nodes commit to `target`'s metadata reach this node's storage
/// module from now on (`DeliverRelayedMetadata`): returns once they will. Sent by the storage
/// module before it reads the set for a new listener (a channel member that gained the metadata
/// feature, a user-metadata subscriber), so the listener misses no change after its snapshot. The
/// relay stops listening by itself once this node has no listener of `target` left: for a
/// channel, no member with the metadata feature; for a user, no subscriber
/// (`UserMetadataSubscriptionChanged`).
///
/// On one node nothing handles it. Throws `storageOperationTimeout` when the relay cannot listen
/// now.
public struct OpenMetadataRelay: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.openMetadataRelay.rawValue
    /// Whose metadata.
    public var target: MetadataTarget
    /// Creates the request.
    public init(_ target: MetadataTarget) {
        self.target = target
    }
}

/// What the relay tells the storage module about a metadata set it listens to.
public enum RelayedMetadata: Sendable, Hashable {
    /// A change another node committed, as the store that committed it published it (the store
    /// reads it back: `MetadataStore.change(publishedAs:of:)`).
    case change([UInt8])
    /// Changes may have been missed (the relay's link to the other nodes was down): read the set
    /// again and tell its listeners.
    case mayHaveMissedChanges
}

/// News of `target`'s metadata from the other nodes, for this node's listeners of it. Sent by
/// the relay in the order it got them; the storage module answers it.
public struct DeliverRelayedMetadata: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.deliverRelayedMetadata.rawValue
    /// Whose metadata.
    public var target: MetadataTarget
    /// What happened.
    public var news: RelayedMetadata
    /// Creates the request.
    public init(target: MetadataTarget, news: RelayedMetadata) {
        self.target = target
        self.news = news
    }
}
