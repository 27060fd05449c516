import SwitchboardCore

/// The pure state of message-channel subscriptions: who is subscribed where, with which features.
struct SubscriptionTable: Sendable {
    private struct Channel {
        var features: [SessionID: RtmSubscribeChannelFeature] = [:]
        /// The sessions that receive messages, cached for the fan-out; nil when stale.
        var messageReceivers: [SessionID]? = []
    }

    private struct Subscriber {
        let userId: UserID
        var channels: Set<String> = []
    }

    private var channels: [String: Channel] = [:]
    private var subscribers: [SessionID: Subscriber] = [:]

    /// Adds or updates a subscription. Returns false when `limit` subscriptions already exist.
    mutating func subscribe(
        _ session: SessionID, userId: UserID, channel name: String, features: RtmSubscribeChannelFeature, limit: Int
    ) -> Bool {
        let current = subscribers[session]?.channels ?? []
        if !current.contains(name) && current.count >= limit { return false }
        subscribers[session, default: Subscriber(userId: userId)].channels.insert(name)
        channels[name, default: Channel()].features[session] = features
        channels[name]?.messageReceivers = nil
        return true
    }

    /// Removes a subscription. Returns false when there was none.
    mutating func unsubscribe(_ session: SessionID, channel name: String) -> Bool {
        guard subscribers[session]?.channels.remove(name) != nil else { return false }
        if subscribers[session]?.channels.isEmpty == true { subscribers[session] = nil }
        channels[name]?.features[session] = nil
        if channels[name]?.features.isEmpty == true {
            channels[name] = nil
        } else {
            channels[name]?.messageReceivers = nil
        }
        return true
    }

    /// Removes every subscription of a session and returns the channel names, sorted.
    mutating func removeAll(of session: SessionID) -> [String] {
        let names = (subscribers[session]?.channels ?? []).sorted()
        for name in names { _ = unsubscribe(session, channel: name) }
        return names
    }

    /// The sessions subscribed to `name` with the `.message` feature, in subscription-id order.
    mutating func messageReceivers(of name: String) -> [SessionID] {
        guard var channel = channels[name] else { return [] }
        if let cached = channel.messageReceivers { return cached }
        let receivers = channel.features.filter { $0.value.contains(.message) }.keys.sorted()
        channel.messageReceivers = receivers
        channels[name] = channel
        return receivers
    }

    /// The channels a session is subscribed to, sorted.
    func channels(of session: SessionID) -> [String] {
        (subscribers[session]?.channels ?? []).sorted()
    }

    /// The features of a subscription, if it exists.
    func features(of session: SessionID, in name: String) -> RtmSubscribeChannelFeature? {
        channels[name]?.features[session]
    }

    /// How many sessions are subscribed to `name`.
    func subscriberCount(of name: String) -> Int { channels[name]?.features.count ?? 0 }
}
