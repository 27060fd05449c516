import SwitchboardCore
import SwitchboardRedis

/// Where a channel's locks live in the cluster's Redis, and the pub/sub channel their changes go
/// out on: the names the Redis lock store writes (and the metadata store reads, to check a
/// writer's lock) and the cluster link listens to.
///
/// Every name of one channel's locks carries the hash tag of the channel's metadata set
/// (`MetadataKeys`: app, type and name), so a channel's locks, their counters, their change
/// channel and its metadata share one shard of a Redis Cluster. The store's session, suspension
/// and countdown indexes and the per-app counts are keys of their own.
public struct LockKeys: Sendable, Hashable {
    /// The hash tag's content, `app:cT:name` (parts escaped with `KeyPart`).
    public let tag: String

    /// The names of `channel`'s locks.
    public init(_ channel: ChannelKey) {
        tag = MetadataKeys(.channel(channel)).tag
    }

    /// The channel whose tag is `tag`; nil when `tag` names none.
    public static func channel(ofTag tag: Substring) -> ChannelKey? {
        guard case .channel(let channel)? = MetadataKeys.target(ofTag: tag) else { return nil }
        return channel
    }

    /// The channel whose lock changes go out on `channel`; nil when it is not such a channel.
    public static func channel(ofEvents channel: RedisChannel) -> ChannelKey? {
        KeyPart.tag(of: channel, prefix: prefix, suffix: eventsSuffix).flatMap(Self.channel(ofTag:))
    }

    /// `sb:lk:{tag}:locks`: a hash, lock name → the lock (ttl, owner, owner's user, fencing
    /// token, line of waiters), as the store encodes it.
    public var locks: [UInt8] { Array("\(Self.prefix)\(tag)}:locks".utf8) }
    /// `sb:lk:{tag}:events`: where each change of the channel's locks is published, in order.
    public var events: RedisChannel { RedisChannel(Self.prefix + tag + Self.eventsSuffix) }

    /// The pattern that matches the lock hashes of every channel of `app` (nil: of every app),
    /// for `SCAN … MATCH`.
    public static func everyLockHash(of app: AppID?) -> String {
        guard let app else { return "\(prefix)*}:locks" }
        var escaped = ""
        for character in KeyPart.escaped(app) {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return "\(prefix)\(escaped):*}:locks"
    }

    private static let prefix = "sb:lk:{"
    private static let eventsSuffix = "}:events"
}
