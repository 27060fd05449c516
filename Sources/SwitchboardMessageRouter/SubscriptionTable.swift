import SwitchboardCore

/// The pure state of message-channel subscriptions: who is subscribed where, with which features.
/// Channels are keyed by app, type and name, so two apps never share a channel.
struct SubscriptionTable: Sendable {
    private struct Channel {
        /// A compact dictionary: most channels have one subscriber.
        var features: CompactDictionary<SessionID, RtmSubscribeChannelFeature> = [:]
        /// The sessions that receive messages, cached for the fan-out; nil when stale.
        var messageReceivers: [SessionID]? = []
    }

    private var channels: [ChannelKey: Channel] = [:]
    private var subscribed: [SessionID: CompactSet<ChannelKey>] = [:]

    /// Adds or updates a subscription. Returns false when `limit` subscriptions already exist.
    mutating func subscribe(
        _ session: SessionID, to channel: ChannelKey, features: RtmSubscribeChannelFeature, limit: Int
    ) -> Bool {
        let current = subscribed[session] ?? []
        if !current.contains(channel) && current.count >= limit { return false }
        subscribed[session, default: []].insert(channel)
        channels[channel, default: Channel()].features[session] = features
        channels[channel]?.messageReceivers = nil
        return true
    }

    /// Removes a subscription. Returns false when there was none.
    mutating func unsubscribe(_ session: SessionID, from channel: ChannelKey) -> Bool {
        guard subscribed[session]?.contains(channel) == true else { return false }
        subscribed.remove(channel, fromSetAt: session)
        channels[channel]?.features[session] = nil
        if channels[channel]?.features.isEmpty == true {
            channels[channel] = nil
        } else {
            channels[channel]?.messageReceivers = nil
        }
        return true
    }

    /// Removes every subscription of a session and returns the channels, sorted by name.
    mutating func removeAll(of session: SessionID) -> [ChannelKey] {
        let keys = channels(of: session)
        for key in keys { _ = unsubscribe(session, from: key) }
        return keys
    }

    /// The sessions subscribed to `channel` with the `.message` feature, in session order.
    mutating func messageReceivers(of channel: ChannelKey) -> [SessionID] {
        guard var entry = channels[channel] else { return [] }
        if let cached = entry.messageReceivers { return cached }
        let receivers = entry.features.compactMap { $0.value.contains(.message) ? $0.key : nil }.sorted()
        entry.messageReceivers = receivers
        channels[channel] = entry
        return receivers
    }

    /// The channels a session is subscribed to, sorted by name.
    func channels(of session: SessionID) -> [ChannelKey] {
        (subscribed[session] ?? []).sorted { $0.name < $1.name }
    }

    /// The features of a subscription, if it exists.
    func features(of session: SessionID, in channel: ChannelKey) -> RtmSubscribeChannelFeature? {
        channels[channel]?.features[session]
    }

    /// How many sessions are subscribed to `channel`.
    func subscriberCount(of channel: ChannelKey) -> Int { channels[channel]?.features.count ?? 0 }
}
