import SwitchboardCore
import SwitchboardRedis

/// Where a stream channel's topics live in the cluster's Redis, and the pub/sub channel its topic
/// changes and topic messages go out on: the names the Redis topic store writes and publishes to
/// and the cluster link listens to.
///
/// Every name of one stream channel carries the hash tag of the channel's metadata set
/// (`MetadataKeys`: app, type and name), as its locks' and presence's do, so they share one shard
/// of a Redis Cluster. The store's index of sessions is a key of its own.
public struct TopicKeys: Sendable, Hashable {
    /// The hash tag's content, `app:cT:name` (parts escaped with `KeyPart`).
    public let tag: String

    /// The names of `channel`'s topics.
    public init(_ channel: ChannelKey) {
        tag = LockKeys(channel).tag
    }

    /// The channel whose tag is `tag`; nil when `tag` names none.
    public static func channel(ofTag tag: Substring) -> ChannelKey? { LockKeys.channel(ofTag: tag) }

    /// The stream channel whose news go out on `channel`; nil when it is not such a channel.
    public static func channel(ofEvents channel: RedisChannel) -> ChannelKey? {
        KeyPart.tag(of: channel, prefix: prefix, suffix: eventsSuffix).flatMap(Self.channel(ofTag:))
    }

    /// `sb:t:{tag}:events`: where each topic change the members are told of is published, in
    /// order, and each topic message for the other nodes' subscribers.
    public var events: RedisChannel { RedisChannel(Self.prefix + tag + Self.eventsSuffix) }

    private static let prefix = "sb:t:{"
    private static let eventsSuffix = "}:events"
}
