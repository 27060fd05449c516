import SwitchboardCore
import SwitchboardRedis

/// The Redis pub/sub channel of each relay target.
///
/// Every name carries a hash tag (`{…}`) of its app and channel or user, so that a Redis Cluster
/// can later place a target's channel and keys on one shard; the parts are escaped, so two
/// targets never share a name.
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

    /// `part` with `%`, `{`, `}` and `:` percent-escaped.
    static func escaped(_ part: String) -> String {
        guard part.utf8.contains(where: { $0 == 0x25 || $0 == 0x7B || $0 == 0x7D || $0 == 0x3A }) else { return part }
        var result = ""
        for character in part.unicodeScalars {
            switch character {
            case "%": result += "%25"
            case "{": result += "%7B"
            case "}": result += "%7D"
            case ":": result += "%3A"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
