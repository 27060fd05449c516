import SwitchboardCore
import SwitchboardRedis

/// Where the nodes of a cluster say in Redis that they live and how they are, written by each
/// node's beat and read in one round trip by `ListClusterNodes`:
/// - `sb:nodes`, a sorted set of node → the wall-clock time its liveness record expires;
/// - `sb:node:{node}`, the node's status without its apps (`NodeStatusRecord`);
/// - `sb:node:{node}:apps`, a hash of app → the app's load on the node, written by changes
///   (`AppLoadPublication`) and read one app at a time.
/// Both keys of a node expire with its liveness record (`beatsToLive` beats after its last beat,
/// in Redis's time), so a dead node drops out whether a reader goes by the record or the keys.
enum NodeDirectory {
    /// The sorted set of the nodes' liveness records.
    static let nodesKey = Array("sb:nodes".utf8)

    /// The key of `node`'s status.
    static func statusKey(of node: String) -> [UInt8] { Array("sb:node:{\(KeyPart.escaped(node))}".utf8) }

    /// The key of `node`'s app hash.
    static func appsKey(of node: String) -> [UInt8] { statusKey(of: node) + Array(":apps".utf8) }

    /// The beat's script: writes the liveness record of node ARGV[1] (expiring at ARGV[2]) into
    /// KEYS[1]; with a status (ARGV[5], empty for none), writes it into KEYS[2] and the changes
    /// of its apps into the hash KEYS[3] (emptied first when ARGV[6] is 1; ARGV[7] fields to set,
    /// then as many field-value pairs, then the fields to remove), both expiring in ARGV[4] ms.
    /// Returns how many records have not expired at ARGV[3], and whether the hash existed
    /// before; `{-1, 0}`, writing nothing, when the node is marked reaped (KEYS[4],
    /// `DeadNodes`). Fields go 500 at a time, within Lua's limit on unpacked values.
    static let beat = RedisScript(
        DeadNodes.escapeFunction + """
        if redis.call('ZSCORE', KEYS[4], escaped(ARGV[1])) then return {-1, 0} end
        redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
        local kept = redis.call('EXISTS', KEYS[3])
        if ARGV[5] ~= '' then
          redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[4])
          if ARGV[6] == '1' then redis.call('DEL', KEYS[3]) end
          local first = 8
          local last = first + 2 * tonumber(ARGV[7]) - 1
          for i = first, last, 1000 do
            redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + 999, last)))
          end
          for i = last + 1, #ARGV, 500 do
            redis.call('HDEL', KEYS[3], unpack(ARGV, i, math.min(i + 499, #ARGV)))
          end
          redis.call('PEXPIRE', KEYS[3], ARGV[4])
        end
        return {redis.call('ZCOUNT', KEYS[1], ARGV[3], '+inf'), kept}
        """)

    /// The beat script's arguments for `node`.
    static func beatArguments(
        node: String, expires: WallClockTime, now: WallClockTime, timeToLive: Duration, status: NodeStatus?,
        changes: AppLoadPublication.Changes
    ) -> [[UInt8]] {
        var arguments = [
            Array(node.utf8), Array(String(expires.millisecondsSince1970).utf8), Array(String(now.millisecondsSince1970).utf8),
            Array(String(max(1, Int64(timeToLive / .milliseconds(1)))).utf8),
        ]
        guard let status else { return arguments + [[]] }
        arguments += [
            NodeStatusRecord.encoded(status), Array((changes.replacesAll ? "1" : "0").utf8), Array(String(changes.set.count).utf8),
        ]
        for (app, load) in changes.set { arguments += [Array(app.utf8), NodeStatusRecord.encoded(load)] }
        for app in changes.removed { arguments.append(Array(app.utf8)) }
        return arguments
    }

    /// The keys of the beat script for `node`.
    static func beatKeys(of node: String) -> [[UInt8]] {
        [nodesKey, statusKey(of: node), appsKey(of: node), Array(DeadNodes.reapedKey.utf8)]
    }

    /// The beat's reply: live records (nil when the node was reaped), and whether the app hash
    /// existed before.
    static func beatOutcome(_ reply: RESPValue) -> (liveNodes: Int?, hashWasThere: Bool) {
        let parts = reply.elements ?? []
        let live = Int(parts.first?.integer ?? 0)
        return (live < 0 ? nil : live, (parts.dropFirst().first?.integer ?? 0) != 0)
    }

    /// A node coming back (starting, or after it learnt it was reaped and ended its sessions):
    /// node ARGV[1] is no longer marked reaped (KEYS[2]) and, when ARGV[2] is not empty, its
    /// liveness record (KEYS[1]) expires then, so no reaper takes it for dead before its next beat.
    static let rejoin = RedisScript(
        DeadNodes.escapeFunction + """
            redis.call('ZREM', KEYS[2], escaped(ARGV[1]))
            if ARGV[2] ~= '' then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
            return 1
            """)

    /// Reads every node whose record has not expired at ARGV[1] (KEYS[1]), with its status and
    /// the load of app ARGV[2] (none when empty): `{node, status or '', load or ''}` each. The
    /// keys are found from the node names (escaped as `KeyPart` does), so this reads keys it does
    /// not declare: fine on one Redis, as the metadata store's indexes are.
    static let list = RedisScript(
        DeadNodes.escapeFunction + """
        local answer = {}
        for _, node in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')) do
          local key = 'sb:node:{' .. escaped(node) .. '}'
          local load = ''
          if ARGV[2] ~= '' then load = redis.call('HGET', key .. ':apps', ARGV[2]) or '' end
          answer[#answer + 1] = {node, redis.call('GET', key) or '', load}
        end
        return answer
        """)

    /// The list script's arguments.
    static func listArguments(now: WallClockTime, app: AppID?) -> [[UInt8]] {
        [Array(String(now.millisecondsSince1970).utf8), Array((app ?? "").utf8)]
    }

    /// The nodes the list script answered, by name; a status that does not read is left out
    /// (its node is listed without one).
    static func liveNodes(from reply: RESPValue, app: AppID?) -> [LiveNode] {
        let nodes = (reply.elements ?? []).compactMap { entry -> LiveNode? in
            guard let parts = entry.elements, parts.count == 3, let node = parts[0].string else { return nil }
            guard case .bulkString(let bytes) = parts[1], !bytes.isEmpty, var status = try? NodeStatusRecord.decoded(bytes) else {
                return LiveNode(nodeID: node, status: nil)
            }
            status.nodeID = node
            if let app, case .bulkString(let load) = parts[2], let counts = NodeStatusRecord.decodedLoad(load) { status.apps = [app: counts] }
            return LiveNode(nodeID: node, status: status)
        }
        return nodes.sorted { $0.nodeID < $1.nodeID }
    }
}
