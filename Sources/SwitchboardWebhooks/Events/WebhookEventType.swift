/// The kinds of webhook events, named as the `type` of each delivery's body.
public enum WebhookEventType: String, Sendable, Hashable, CaseIterable {
    /// A user's first session started.
    case userOnline = "user.online"
    /// A user's last session ended (`reason`: logout, timeout, kicked, token_expired, server_shutdown).
    case userOffline = "user.offline"
    /// A session subscribed to a message channel or joined a stream channel.
    case channelJoined = "channel.joined"
    /// A session left a channel (`reason`: left, logout, kicked, token_expired, server_shutdown).
    case channelLeft = "channel.left"
    /// A session left a channel because it was not resumed within its presence timeout.
    case channelTimeout = "channel.timeout"
    /// A channel got its first member.
    case channelOccupied = "channel.occupied"
    /// A channel lost its last member.
    case channelVacated = "channel.vacated"
    /// A member's temporary state in a channel changed.
    case presenceStateChanged = "presence.state_changed"
    /// Channel or user metadata changed (with its new revision).
    case metadataChanged = "metadata.changed"
    /// A lock was acquired.
    case lockAcquired = "lock.acquired"
    /// A lock was released by its owner (or its owner left).
    case lockReleased = "lock.released"
    /// A lock's lost owner did not come back within its ttl.
    case lockExpired = "lock.expired"
    /// The server's API took a lock from its owner.
    case lockRevoked = "lock.revoked"
    /// A user-channel message found its receiver offline: the hook for push notifications.
    case messageOffline = "message.offline"
}
