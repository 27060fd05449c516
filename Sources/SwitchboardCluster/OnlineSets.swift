import SwitchboardCore
import SwitchboardRedis

/// The users' online sets (`sb:ou:{app:user}`, the nodes holding a user's sessions) and, per
/// node, the index of the sets that list it (`sb:on:{node}`), kept together by one script each, so
/// a reaper takes a dead node out of every set it was in without a scan.
struct OnlineSets: DeadNodeStep {
    let redis: RedisConnections

    /// Lists node ARGV[1] in the online set KEYS[1] and the set in the node's index KEYS[2].
    static let list = RedisScript(
        """
        redis.call('SADD', KEYS[2], KEYS[1])
        return redis.call('SADD', KEYS[1], ARGV[1])
        """)

    /// Takes node ARGV[1] off the online set KEYS[1] and the set off the node's index KEYS[2].
    static let unlist = RedisScript(
        """
        redis.call('SREM', KEYS[2], KEYS[1])
        return redis.call('SREM', KEYS[1], ARGV[1])
        """)

    /// While node ARGV[1] is marked reaped (KEYS[2]), takes it off every online set in its index
    /// (KEYS[1]) and drops the index. Returns how many sets listed it; -1 when it is not marked.
    static let reap = RedisScript(
        DeadNodes.escapeFunction + """
            if not redis.call('ZSCORE', KEYS[2], escaped(ARGV[1])) then return -1 end
            local listed = 0
            for _, set in ipairs(redis.call('SMEMBERS', KEYS[1])) do listed = listed + redis.call('SREM', set, ARGV[1]) end
            redis.call('DEL', KEYS[1])
            return listed
            """)

    /// Lists (or takes off, when `listed` is false) `node` as holding sessions of `user`.
    func set(_ user: UserKey, node: String, listed: Bool) async throws(RedisError) {
        _ = try await redis.run(
            listed ? Self.list : Self.unlist, keys: [RelayChannels.onlineKey(of: user), RelayChannels.onlineIndexKey(of: node)],
            arguments: [Array(node.utf8)])
    }

    func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws {
        _ = try await redis.run(
            Self.reap, keys: [RelayChannels.onlineIndexKey(of: node), Array(DeadNodes.reapedKey.utf8)], arguments: [Array(node.utf8)])
    }
}
