import SwitchboardCore
import SwitchboardRedis

/// Where a metadata set lives in the cluster's Redis, and the pub/sub channel its changes go out
/// on: the names the Redis metadata store writes and the cluster link listens to.
///
/// Every name of one set carries the same hash tag (`{…}`): its app, scope and name, so a Redis
/// Cluster keeps a set's keys and its channel on one shard. The store's indexes (`leases`,
/// `bound`) and its sealing marker are keys of their own.
public struct MetadataKeys: Sendable, Hashable {
    /// The hash tag's content, `app:scope:name` (parts escaped with `KeyPart`); the scope is `c1`
    /// for a message channel, `c2` for a stream channel, `u` for a user.
    public let tag: String

    /// The names of `target`'s set.
    public init(_ target: MetadataTarget) {
        switch target {
        case .channel(let channel):
            tag = "\(KeyPart.escaped(channel.app)):c\(channel.type.rawValue):\(KeyPart.escaped(channel.name))"
        case .user(let user):
            tag = "\(KeyPart.escaped(user.app)):u:\(KeyPart.escaped(user.userId))"
        }
    }

    /// The set whose tag is `tag`; nil when `tag` names none.
    public static func target(ofTag tag: Substring) -> MetadataTarget? {
        let parts = tag.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let app = KeyPart.unescaped(parts[0]), let name = KeyPart.unescaped(parts[2]) else {
            return nil
        }
        if parts[1] == "u" { return .user(UserKey(app, name)) }
        guard parts[1].first == "c", let raw = Int(parts[1].dropFirst()), let type = RtmChannelType(rawValue: raw),
            type == .message || type == .stream
        else { return nil }
        return .channel(ChannelKey(app: app, type, name))
    }

    /// The set whose changes go out on `channel`; nil when it is not such a channel.
    public static func target(ofChannel channel: RedisChannel) -> MetadataTarget? {
        let name = String(decoding: channel.name, as: UTF8.self)
        guard name.hasPrefix(channelPrefix), name.hasSuffix(channelSuffix) else { return nil }
        return target(ofTag: name.dropFirst(channelPrefix.count).dropLast(channelSuffix.count))
    }

    /// `sb:md:{tag}:set`: the set, as the store encodes it; absent when the set has no items.
    public var set: [UInt8] { key("set") }
    /// `sb:md:{tag}:rev`: the revision of the set's last change, kept when the set is removed,
    /// so its revisions are never reused.
    public var revision: [UInt8] { key("rev") }
    /// `sb:md:{tag}:fences`: per node and lock, the fencing token writes under it last committed with.
    public var fences: [UInt8] { key("fences") }
    /// `sb:md:{tag}:changes`: where each change of the set is published, in revision order.
    public var channel: RedisChannel { RedisChannel(Self.channelPrefix + tag + Self.channelSuffix) }

    /// A sorted set of the tags of sets with a time-to-live item, scored by the earliest expiry.
    public static let leases = Array("sb:md:leases".utf8)
    /// A sorted set (scores 0, read by prefix) of `node:session:tag`: the session-bound items.
    public static let bound = Array("sb:md:bound".utf8)
    /// The value sealed at rest that names the storage key of every sealed value.
    public static let sealingMarker = Array("sb:md:sealing".utf8)
    /// The pattern that matches every set (`SCAN … MATCH`).
    public static let everySet = "sb:md:{*}:set"

    private static let channelPrefix = "sb:md:{"
    private static let channelSuffix = "}:changes"

    private func key(_ name: String) -> [UInt8] { Array("sb:md:{\(tag)}:\(name)".utf8) }
}
