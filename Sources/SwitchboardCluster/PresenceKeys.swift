import SwitchboardCore
import SwitchboardRedis

/// Where a channel's presence lives in the cluster's Redis, and the pub/sub channel its changes
/// go out on: the names the Redis presence store writes and the cluster link listens to.
///
/// Every name of one channel's presence carries the hash tag of the channel's metadata set
/// (`MetadataKeys`: app, type and name), so a channel's members, states, counter and change
/// channel share one shard of a Redis Cluster. A user's channels and sessions carry the user's
/// tag; the store's index of sessions is a key of its own.
public struct PresenceKeys: Sendable, Hashable {
    /// The hash tag's content, `app:cT:name` (parts escaped with `KeyPart`).
    public let tag: String

    /// The names of `channel`'s presence.
    public init(_ channel: ChannelKey) {
        tag = LockKeys(channel).tag
    }

    /// The channel whose tag is `tag`; nil when `tag` names none.
    public static func channel(ofTag tag: Substring) -> ChannelKey? { LockKeys.channel(ofTag: tag) }

    /// The channel whose presence changes go out on `channel`; nil when it is not such a channel.
    public static func channel(ofEvents channel: RedisChannel) -> ChannelKey? {
        KeyPart.tag(of: channel, prefix: prefix, suffix: eventsSuffix).flatMap(Self.channel(ofTag:))
    }

    /// The hash tag's content of `user`'s presence, `app:u:user`.
    public static func tag(of user: UserKey) -> String { MetadataKeys(.user(user)).tag }

    /// `sb:p:{tag}:events`: where each change of the channel's presence that members are told of
    /// is published, in order.
    public var events: RedisChannel { RedisChannel(Self.prefix + tag + Self.eventsSuffix) }

    private static let prefix = "sb:p:{"
    private static let eventsSuffix = "}:events"
}
