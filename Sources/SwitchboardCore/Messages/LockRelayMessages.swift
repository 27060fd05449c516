/// Makes sure the changes of `channel`'s locks, wherever they are made, reach this node's lock
/// module from now on (`DeliverRelayedLocks`): returns once they will. Sent by the lock module
/// before it takes a snapshot for a member that gained the lock feature, and before a session
/// of this node waits in a line there, so neither misses a change after it. The relay stops
/// listening by itself once this node has no member of `channel` left (waiters are members).
///
/// On one node nothing handles it. Throws `lockOperationTimeout` when the relay cannot listen now.
public struct OpenLockRelay: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.openLockRelay.rawValue
    /// Whose locks.
    public var channel: ChannelKey
    /// Creates the request.
    public init(_ channel: ChannelKey) {
        self.channel = channel
    }
}

/// What the relay tells the lock module about a channel's locks.
public enum RelayedLocks: Sendable, Hashable {
    /// A change, as the store that made it published it (the store reads it back:
    /// `LockStore.change(publishedAs:)`).
    case change([UInt8])
    /// Changes may have been missed (the relay's link to Redis was down): send the channel's
    /// locks again.
    case mayHaveMissedChanges
}

/// News of `channel`'s locks, for this node's members and waiters there. Sent by the relay in the
/// order it got them, which is the store's order; the lock module answers it.
public struct DeliverRelayedLocks: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.deliverRelayedLocks.rawValue
    /// Whose locks.
    public var channel: ChannelKey
    /// What happened.
    public var news: RelayedLocks
    /// Creates the request.
    public init(channel: ChannelKey, news: RelayedLocks) {
        self.channel = channel
        self.news = news
    }
}
