import SwitchboardCore
import SwitchboardRedis

/// The users' online sets (`sb:ou:{app:user}`, the nodes holding a user's sessions), per app the
/// set of its users online on some node (`sb:oa:{app}`, the concurrent-user limit across the
/// cluster) and, per node, the index of the sets that list it (`sb:on:{node}`), kept together by
/// one script each, so a reaper takes a dead node out of every set it was in without a scan, and
/// each script can tell when a user came online on the first node or left the last one.
///
/// Each script touches three hash slots (the user's, the app's and the node's): fine on one
/// Redis; a Redis Cluster needs the app set and the node index split by slot first.
struct OnlineSets: DeadNodeStep {
    let redis: RedisConnections

    /// What listing a node for a user did.
    enum Listing: Equatable {
        /// The node was listed; `first` when no node listed the user before (the user came online).
        case listed(first: Bool)
        /// The user was online on no node and the app already had `limit` users online elsewhere:
        /// nothing changed.
        case full(limit: Int)
    }

    /// Lists node ARGV[1] in the online set KEYS[1] and the set in the node's index KEYS[2]; when
    /// the set was empty, adds the user (ARGV[3]) to the app's set KEYS[3], unless that set holds
    /// ARGV[2] users already (no limit when ARGV[2] is empty). Returns 2 when the user came online
    /// with it, 1 when another node listed the user (or this one already did), -1 when refused.
    static let list = RedisScript(
        """
        local first = redis.call('SCARD', KEYS[1]) == 0
        if first and ARGV[2] ~= '' and redis.call('SISMEMBER', KEYS[3], ARGV[3]) == 0
          and redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[2]) then return -1 end
        redis.call('SADD', KEYS[3], ARGV[3])
        redis.call('SADD', KEYS[2], KEYS[1])
        redis.call('SADD', KEYS[1], ARGV[1])
        if first then return 2 end
        return 1
        """)

    /// Takes node ARGV[1] off the online set KEYS[1] and the set off the node's index KEYS[2];
    /// when the set is left empty, the user (ARGV[2]) leaves the app's set KEYS[3]. Returns 2 when
    /// the user went offline with it, 1 when other nodes still list the user, 0 when this node
    /// was not listed.
    static let unlist = RedisScript(
        """
        redis.call('SREM', KEYS[2], KEYS[1])
        if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end
        if redis.call('SCARD', KEYS[1]) > 0 then return 1 end
        redis.call('SREM', KEYS[3], ARGV[2])
        return 2
        """)

    /// Takes node ARGV[1] off every online set in its index (KEYS[1]) and drops the index; each
    /// user left online on no node leaves its app's set (`sb:oa:{app}`, named from the online
    /// set's tag). Only while the node is marked reaped (KEYS[2]). Returns the online sets left
    /// empty; -1 when the node is not marked.
    static let reap = RedisScript(
        DeadNodes.escapeFunction + """
            if not redis.call('ZSCORE', KEYS[2], escaped(ARGV[1])) then return -1 end
            local emptied = {}
            for _, set in ipairs(redis.call('SMEMBERS', KEYS[1])) do
              if redis.call('SREM', set, ARGV[1]) == 1 and redis.call('SCARD', set) == 0 then
                local app, user = string.match(set, '^sb:ou:{([^:]*):(.*)}$')
                if app then redis.call('SREM', 'sb:oa:{' .. app .. '}', user) end
                emptied[#emptied + 1] = set
              end
            end
            redis.call('DEL', KEYS[1])
            return emptied
            """)

    /// How many users of `app` are online on some node.
    static let count = RedisScript("return redis.call('SCARD', KEYS[1])")

    /// How many users of `app` are online on some node.
    func users(of app: AppID) async throws(RedisError) -> Int {
        Int(try await redis.run(Self.count, keys: [RelayChannels.appOnlineKey(of: app)], arguments: []).integer ?? 0)
    }

    /// Lists `node` as holding sessions of `user`; with a `limit`, refuses (`.full`) a user
    /// online on no node while the app has `limit` users online.
    func list(_ user: UserKey, node: String, limit: Int?) async throws(RedisError) -> Listing {
        let reply = try await redis.run(
            Self.list, keys: Self.keys(of: user, node: node),
            arguments: [Array(node.utf8), Array((limit.map(String.init) ?? "").utf8), Array(KeyPart.escaped(user.userId).utf8)])
        switch reply.integer {
        case -1: return .full(limit: limit ?? 0)
        case 2: return .listed(first: true)
        default: return .listed(first: false)
        }
    }

    /// Takes `node` off the nodes holding sessions of `user`; true when the user is now online on
    /// no node (it was this node's to take off).
    func unlist(_ user: UserKey, node: String) async throws(RedisError) -> Bool {
        let reply = try await redis.run(
            Self.unlist, keys: Self.keys(of: user, node: node), arguments: [Array(node.utf8), Array(KeyPart.escaped(user.userId).utf8)])
        return reply.integer == 2
    }

    /// Takes `node` off every online set that lists it, while it is marked reaped; returns the
    /// users now online on no node.
    func unlistEverywhere(_ node: String) async throws(RedisError) -> [UserKey] {
        let reply = try await redis.run(
            Self.reap, keys: [RelayChannels.onlineIndexKey(of: node), Array(DeadNodes.reapedKey.utf8)], arguments: [Array(node.utf8)])
        return (reply.elements ?? []).compactMap { $0.string.flatMap(RelayChannels.user(ofOnlineKey:)) }
    }

    /// The users the reaped `node` held that are now online on no node.
    func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions {
        ReapedSessions(usersOffline: try await unlistEverywhere(node))
    }

    /// The user's online set, the node's index and the app's set.
    private static func keys(of user: UserKey, node: String) -> [[UInt8]] {
        [RelayChannels.onlineKey(of: user), RelayChannels.onlineIndexKey(of: node), RelayChannels.appOnlineKey(of: user.app)]
    }
}
