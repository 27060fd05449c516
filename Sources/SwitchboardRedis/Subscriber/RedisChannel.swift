/// A pub/sub channel: a name, and whether it is a shard channel (`SSUBSCRIBE`/`SPUBLISH`, which a
/// Redis Cluster keeps on the shard of its slot).
public struct RedisChannel: Sendable, Hashable, CustomStringConvertible {
    /// The channel's name, binary-safe.
    public var name: [UInt8]
    /// True for a shard channel.
    public var sharded: Bool

    /// The channel named `name`.
    public init(_ name: String, sharded: Bool = false) {
        self.init(bytes: Array(name.utf8), sharded: sharded)
    }

    /// The channel named by the bytes `name`.
    public init(bytes name: [UInt8], sharded: Bool = false) {
        self.name = name
        self.sharded = sharded
    }

    public var description: String {
        (sharded ? "shard:" : "") + String(decoding: name, as: UTF8.self)
    }
}

/// A message published to a channel.
public struct RedisMessage: Sendable, Hashable {
    /// The channel it was published to.
    public var channel: RedisChannel
    /// What was published, binary-safe.
    public var payload: [UInt8]

    /// A message.
    public init(channel: RedisChannel, payload: [UInt8]) {
        self.channel = channel
        self.payload = payload
    }
}

/// What a `RedisSubscriber` tells its handler.
public enum RedisSubscriberEvent: Sendable, Hashable {
    /// A message on a subscribed channel.
    case message(RedisMessage)
    /// The link to Redis dropped: until `linkRestored`, messages published to every channel are
    /// lost (Redis pub/sub keeps nothing for an absent subscriber).
    case linkLost(RedisError)
    /// The link is back and every channel in `gap` is subscribed again; each may have missed
    /// messages published since `linkLost`. These are all the channels subscribed at that moment.
    case linkRestored(gap: [RedisChannel])
}
