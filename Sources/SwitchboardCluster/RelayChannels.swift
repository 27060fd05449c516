import SwitchboardCore
import SwitchboardRedis

/// The Redis pub/sub channel of each relay target.
///
/// Every name carries a hash tag (`{…}`) of its app and channel or user, so that a Redis Cluster
/// can later place a target's channel and keys on one shard; the parts are escaped (`KeyPart`),
/// so two targets never share a name.
enum RelayChannels {
    /// `sb:m:{app:channel}` for a message channel, `sb:u:{app:user}` for a user.
    static func channel(of target: RelayTarget) -> RedisChannel {
        switch target {
        case .channel(let channel): RedisChannel("sb:m:{\(escaped(channel.app)):\(escaped(channel.name))}")
        case .user(let user): RedisChannel("sb:u:{\(escaped(user.app)):\(escaped(user.userId))}")
        }
    }

    /// `sb:ou:{app:user}`: the set of nodes where `user` has sessions, under the tag of the user's
    /// channel (a script reads it and publishes to that channel).
    static func onlineKey(of user: UserKey) -> [UInt8] {
        Array("sb:ou:{\(escaped(user.app)):\(escaped(user.userId))}".utf8)
    }

    /// The user whose online set `key` (`onlineKey`) is; nil when it names none.
    static func user(ofOnlineKey key: String) -> UserKey? {
        guard key.hasPrefix("sb:ou:{"), key.hasSuffix("}") else { return nil }
        let tag = key.dropFirst(7).dropLast()
        guard let colon = tag.firstIndex(of: ":"), let app = KeyPart.unescaped(tag[..<colon]),
            let user = KeyPart.unescaped(tag[tag.index(after: colon)...])
        else { return nil }
        return UserKey(app, user)
    }

    /// `sb:oa:{app}`: the users of `app` online on some node (escaped user ids), kept with the
    /// online sets (`OnlineSets`): the app's concurrent users across the cluster.
    static func appOnlineKey(of app: AppID) -> [UInt8] {
        Array("sb:oa:{\(escaped(app))}".utf8)
    }

    /// `sb:ug:{app:user}`: the generation of `user`'s last login across the nodes (`UserClaims`),
    /// under the tag of the user's channel (the claim script sets it and publishes to that channel).
    static func generationKey(of user: UserKey) -> [UInt8] {
        Array("sb:ug:{\(escaped(user.app)):\(escaped(user.userId))}".utf8)
    }

    /// `sb:on:{node}`: the online sets (`onlineKey`) that list `node`, so a reaper of the node
    /// finds them (`OnlineSets`).
    static func onlineIndexKey(of node: String) -> [UInt8] {
        Array("sb:on:{\(escaped(node))}".utf8)
    }

    /// The target whose messages go out on `channel`; nil when it is not such a channel.
    static func target(of channel: RedisChannel) -> RelayTarget? {
        for (prefix, isUser) in [("sb:m:{", false), ("sb:u:{", true)] {
            guard let tag = KeyPart.tag(of: channel, prefix: prefix, suffix: "}") else { continue }
            let parts = tag.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let app = KeyPart.unescaped(parts[0]), let name = KeyPart.unescaped(parts[1]) else { return nil }
            return isUser ? .user(UserKey(app, name)) : .channel(ChannelKey(app: app, .message, name))
        }
        return nil
    }

    private static func escaped(_ part: String) -> String { KeyPart.escaped(part) }
}
