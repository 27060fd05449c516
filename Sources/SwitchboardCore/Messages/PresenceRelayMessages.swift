/// Makes sure the changes of `channel`'s presence, wherever they are made, reach this node's
/// presence module from now on (`DeliverRelayedPresence`): returns once they will. Sent by the
/// presence module before it takes a snapshot for a member that asked for presence events, so
/// the snapshot and the changes after it leave no hole. The relay stops listening by itself once
/// no member of `channel` on this node asks for presence events.
///
/// On one node nothing handles it. Throws `presenceNotConnected` when the relay cannot listen now.
public struct OpenPresenceRelay: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.openPresenceRelay.rawValue
    /// Whose presence.
    public var channel: ChannelKey
    /// Creates the request.
    public init(_ channel: ChannelKey) {
        self.channel = channel
    }
}

/// What the relay tells the presence module about a channel's presence.
public enum RelayedPresence: Sendable, Hashable {
    /// A change, as the store that made it published it (the store reads it back:
    /// `PresenceStore.change(publishedAs:)`).
    case change([UInt8])
    /// Changes may have been missed (the relay's link to Redis was down): send the channel's
    /// listeners a new snapshot.
    case mayHaveMissedChanges
}

/// News of `channel`'s presence, for this node's listeners there. Sent by the relay in the order
/// it got them, which is the store's order; the presence module answers it.
public struct DeliverRelayedPresence: BusRequest, Hashable {
    public typealias Response = Done
    public static let operation = OperationName.Relay.deliverRelayedPresence.rawValue
    /// Whose presence.
    public var channel: ChannelKey
    /// What happened.
    public var news: RelayedPresence
    /// Creates the request.
    public init(channel: ChannelKey, news: RelayedPresence) {
        self.channel = channel
        self.news = news
    }
}
