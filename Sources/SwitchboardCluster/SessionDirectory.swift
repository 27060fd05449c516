import SwitchboardCore
import SwitchboardRedis
import SwitchboardWire

/// Which node holds each session, so that another node can take a session over when its client
/// reconnects there with its resume ticket (`AdoptSession`).
///
/// Per user, `sb:ss:{app:user}`, a hash: session number → `node\nsecret\npresence timeout`, under
/// the tag of the user's channel (the announcement of a take-over goes out on that channel). Per node,
/// `sb:sn:{node}`, the index of the entries it holds (`key\nsession`), so a reaper or the node's
/// next run finds them without a scan (a key of its own tag: fine on one Redis, as the online
/// sets' index is). Session numbers come from one counter (`sb:sessions:blocks`): each node run
/// takes a block of 2^32 numbers, so a number names one session on every node.
///
/// When a node is reaped, its sessions become orphans (`sb:orphans`, scored by the wall-clock
/// millisecond each one's presence timeout runs out from the node's last beat): until then another
/// node may take one over; then, untaken, it ends (`takeDue`, then every `DeadNodeStep`'s
/// `endOrphan`), and after the last one what is left of the node ends (`endLeftovers`).
struct SessionDirectory: DeadNodeStep {
    let redis: RedisConnections
    let nodeID: String

    /// The counter of session-number blocks.
    static let blocksKey = Array("sb:sessions:blocks".utf8)

    /// `sb:ss:{app:user}`: the sessions of `user` and the node holding each.
    static func key(of user: UserKey) -> [UInt8] {
        Array("sb:ss:{\(KeyPart.escaped(user.app)):\(KeyPart.escaped(user.userId))}".utf8)
    }

    /// `sb:sn:{node}`: the entries `node` holds.
    static func indexKey(of node: String) -> [UInt8] {
        Array("sb:sn:{\(KeyPart.escaped(node))}".utf8)
    }

    /// Takes the next block (KEYS[1]): Redis's clock in seconds since 2023-11-14, or one more
    /// than the last block when that is not smaller, so blocks grow across a restart of Redis
    /// that kept nothing. Returns the block.
    static let reserve = RedisScript(
        """
        local now = tonumber(redis.call('TIME')[1]) - 1700000000
        local block = redis.call('INCR', KEYS[1])
        if block < now then
          block = now
          redis.call('SET', KEYS[1], block)
        end
        return block
        """)

    /// The wall-clock times untaken sessions of dead nodes end at.
    static let orphansKey = Array("sb:orphans".utf8)

    /// Forgets session ARGV[1] of the user (KEYS[1]) if node ARGV[2] still holds it, and takes it
    /// off the node's index (KEYS[2]). Returns 1 when it was the node's.
    static let forget = RedisScript(
        """
        redis.call('SREM', KEYS[2], KEYS[1] .. '\\n' .. ARGV[1])
        local entry = redis.call('HGET', KEYS[1], ARGV[1])
        if not entry or string.sub(entry, 1, #ARGV[2] + 1) ~= ARGV[2] .. '\\n' then return 0 end
        redis.call('HDEL', KEYS[1], ARGV[1])
        return 1
        """)

    /// Takes session ARGV[1] of the user (KEYS[1]) over for node ARGV[2] when its secret is
    /// ARGV[3] and another node holds it (alive, or dead with the session's wait not yet run out:
    /// `takeDue` removes the entry when it does), or this node's earlier run does while the session
    /// waits as an orphan; its orphan entry, if any, goes (the session is taken, and may come back
    /// to the node that left it orphaned, whose orphan's time must not end it then); moves the
    /// entry from that node's index to this one's (KEYS[2]; the former index's name is built from
    /// its id), with presence timeout ARGV[4], and marks the session as the former node named it
    /// moved (`DeadNodes.movedKey`), and as this node names it no longer (it may come back to a
    /// node it left).
    /// Returns the former node's id, or false.
    static let adopt = RedisScript(
        DeadNodes.escapeFunction + """
            local entry = redis.call('HGET', KEYS[1], ARGV[1])
            if not entry then return false end
            local first = string.find(entry, '\\n', 1, true)
            local second = string.find(entry, '\\n', first + 1, true) or (#entry + 1)
            local former, secret = string.sub(entry, 1, first - 1), string.sub(entry, first + 1, second - 1)
            if secret ~= ARGV[3] then return false end
            -- Taken over, it is nobody's orphan any more: were the entry to come back to the node
            -- that was reaped, its orphan's time would otherwise end it there. This node's earlier
            -- run held it: only while it waits as an orphan (no longer once ended).
            local orphaned = redis.call('ZREM', 'sb:orphans', 's\\n' .. former .. '\\n' .. KEYS[1] .. '\\n' .. ARGV[1])
            if former == ARGV[2] and orphaned == 0 then return false end
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '\\n' .. secret .. '\\n' .. ARGV[4])
            local now = redis.call('TIME')
            local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
            redis.call('ZADD', '\(DeadNodes.movedKey)', ms, escaped(former) .. ':' .. ARGV[1])
            redis.call('ZREM', '\(DeadNodes.movedKey)', escaped(ARGV[2]) .. ':' .. ARGV[1])
            redis.call('ZREMRANGEBYSCORE', '\(DeadNodes.movedKey)', '-inf', ms - 86400000)
            redis.call('SREM', 'sb:sn:{' .. escaped(former) .. '}', KEYS[1] .. '\\n' .. ARGV[1])
            redis.call('SADD', KEYS[2], KEYS[1] .. '\\n' .. ARGV[1])
            return former
            """)

    /// Node ARGV[1] was reaped, its last beat at wall-clock millisecond ARGV[2]: each session its
    /// index (KEYS[1]) holds becomes an orphan (KEYS[2]) until its presence timeout from then, and
    /// the node's leftovers are due after the last of them. A second call changes nothing. `1`.
    static let orphan = RedisScript(
        """
        local node, lastBeat = ARGV[1], tonumber(ARGV[2])
        local latest = lastBeat
        for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
          local newline = string.find(member, '\\n', 1, true)
          local key, session = string.sub(member, 1, newline - 1), string.sub(member, newline + 1)
          local entry = redis.call('HGET', key, session)
          if entry and string.sub(entry, 1, #node + 1) == node .. '\\n' then
            local timeout = tonumber(string.match(entry, '\\n[^\\n]*\\n(%d+)$') or '0')
            local deadline = lastBeat + timeout * 1000
            if deadline > latest then latest = deadline end
            redis.call('ZADD', KEYS[2], 'NX', deadline, 's\\n' .. node .. '\\n' .. key .. '\\n' .. session)
          end
        end
        redis.call('ZADD', KEYS[2], 'NX', latest + 1000, 'n\\n' .. node)
        return 1
        """)

    /// The orphans (KEYS[1]) due by wall-clock millisecond ARGV[1], at most ARGV[2] of them, each
    /// taken off: `{'s', node, session, …}` for a session no node took over (its entry removed, so
    /// no node can take it over now), `{'n', node}` for a node whose leftovers are due while it is
    /// still marked reaped (KEYS[2]).
    static let takeDue = RedisScript(
        DeadNodes.escapeFunction + """
            local out = {}
            for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))) do
              redis.call('ZREM', KEYS[1], member)
              local kind, rest = string.sub(member, 1, 1), string.sub(member, 3)
              if kind == 's' then
                local first = string.find(rest, '\\n', 1, true)
                local node = string.sub(rest, 1, first - 1)
                local tail = string.sub(rest, first + 1)
                local last = string.find(tail, '\\n[^\\n]*$')
                local key, session = string.sub(tail, 1, last - 1), string.sub(tail, last + 1)
                local entry = redis.call('HGET', key, session)
                if entry and string.sub(entry, 1, #node + 1) == node .. '\\n' then
                  redis.call('HDEL', key, session)
                  redis.call('SREM', 'sb:sn:{' .. escaped(node) .. '}', key .. '\\n' .. session)
                  out[#out + 1] = 's'
                  out[#out + 1] = node
                  out[#out + 1] = session
                end
              elseif redis.call('ZSCORE', KEYS[2], escaped(rest)) then
                out[#out + 1] = 'n'
                out[#out + 1] = rest
              end
            end
            return out
            """)

    /// Forgets every entry node ARGV[1] still holds (its index, KEYS[1]) while it is marked reaped
    /// (KEYS[2]). Returns how many it held; -1 when the node is not marked.
    static let drop = RedisScript(
        DeadNodes.escapeFunction + """
            if not redis.call('ZSCORE', KEYS[2], escaped(ARGV[1])) then return -1 end
            local held = 0
            for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
              local newline = string.find(member, '\\n', 1, true)
              local key, session = string.sub(member, 1, newline - 1), string.sub(member, newline + 1)
              local entry = redis.call('HGET', key, session)
              if entry and string.sub(entry, 1, #ARGV[1] + 1) == ARGV[1] .. '\\n' then
                redis.call('HDEL', key, session)
                held = held + 1
              end
            end
            redis.call('DEL', KEYS[1])
            return held
            """)

    /// Writes back, for node ARGV[1], the entries of sessions it holds that Redis no longer has
    /// (after a restart that kept nothing): the index is KEYS[1], then per session its user's
    /// sessions (KEYS[i + 1]) and, in ARGV from 2, its number, secret and presence timeout. An
    /// entry Redis has is left as it is (another node may hold it now), and so is a session marked
    /// gone (taken over). Returns how many were written.
    static let restore = RedisScript(
        DeadNodes.escapeFunction + DeadNodes.isGoneFunction + """
            local restored = 0
            for i = 2, #KEYS do
              local at = 2 + (i - 2) * 3
              local session = ARGV[at]
              if not isGone(escaped(ARGV[1]) .. ':' .. session) and
                redis.call('HSETNX', KEYS[i], session, ARGV[1] .. '\\n' .. ARGV[at + 1] .. '\\n' .. ARGV[at + 2]) == 1 then
                redis.call('SADD', KEYS[1], KEYS[i] .. '\\n' .. session)
                restored = restored + 1
              end
            end
            return restored
            """)

    /// A session of this node as the directory records it.
    struct Entry: Sendable {
        let user: UserKey
        let secret: String
        let presenceTimeout: Int
    }

    /// Writes `held`'s entries back where Redis lost them, a batch per call; how many it wrote.
    func restore(_ held: [SessionID: Entry]) async throws(RedisError) -> Int {
        try await WriteBack.inBatches(Array(held)) { (batch: ArraySlice<(key: SessionID, value: Entry)>) async throws(RedisError) -> Int in
            let reply = try await redis.run(
                Self.restore, keys: [Self.indexKey(of: nodeID)] + batch.map { Self.key(of: $0.value.user) },
                arguments: [Array(nodeID.utf8)] + batch.flatMap { session, entry in
                    [Self.number(session), Array(entry.secret.utf8), Array(String(entry.presenceTimeout).utf8)]
                })
            return Int(reply.integer ?? 0)
        }
    }

    /// The first number of this node run's block: its sessions are numbered after it.
    func reserveNumbers() async throws(RedisError) -> UInt64 {
        let block = try await redis.run(Self.reserve, keys: [Self.blocksKey], arguments: []).integer ?? 0
        return UInt64(max(block, 1)) << 32
    }

    /// Forgets `caller`'s session if this node still holds it.
    func forget(_ caller: Caller) async throws(RedisError) {
        _ = try await redis.run(
            Self.forget, keys: [Self.key(of: caller.user), Self.indexKey(of: nodeID)],
            arguments: [Self.number(caller.session), Array(nodeID.utf8)])
    }

    /// Takes `ticket`'s session of `user` over for this node, where it waits `presenceTimeout`
    /// seconds for a resume if this node dies; the former node's id, or nil.
    func adopt(_ ticket: ResumeTicket, of user: UserKey, presenceTimeout: Int) async throws(RedisError) -> String? {
        let reply = try await redis.run(
            Self.adopt, keys: [Self.key(of: user), Self.indexKey(of: nodeID)],
            arguments: [Self.number(ticket.session), Array(nodeID.utf8), Array(ticket.secret.utf8), Array(String(presenceTimeout).utf8)])
        return reply.string
    }

    /// What a due orphan is.
    enum Due: Equatable {
        /// A session no node took over.
        case session(SessionID, node: String)
        /// What is left of a dead node.
        case leftovers(node: String)
    }

    /// The orphans due by `now`, taken off (at most `most`).
    func takeDue(now: WallClockTime, most: Int = 256) async throws(RedisError) -> [Due] {
        let reply = try await redis.run(
            Self.takeDue, keys: [Self.orphansKey, Array(DeadNodes.reapedKey.utf8)],
            arguments: [Array(String(now.millisecondsSince1970).utf8), Array(String(most).utf8)])
        var due: [Due] = []
        var parts = (reply.elements ?? []).compactMap(\.string)[...]
        while let kind = parts.popFirst(), let node = parts.popFirst() {
            if kind == "s" {
                guard let number = parts.popFirst().flatMap({ UInt64($0) }) else { break }
                due.append(.session(SessionID(number), node: node))
            } else {
                due.append(.leftovers(node: node))
            }
        }
        return due
    }

    /// The dead node's sessions become orphans, each until its presence timeout from `lastBeat`.
    func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions {
        _ = try await redis.run(
            Self.orphan, keys: [Self.indexKey(of: node), Self.orphansKey],
            arguments: [Array(node.utf8), Array(String(lastBeat.millisecondsSince1970).utf8)])
        return ReapedSessions()
    }

    /// After the node's last orphan: the entries it still holds (none, unless one was written
    /// while it was being reaped) go.
    func endLeftovers(ofNode node: String) async throws -> ReapedSessions {
        _ = try await redis.run(
            Self.drop, keys: [Self.indexKey(of: node), Array(DeadNodes.reapedKey.utf8)], arguments: [Array(node.utf8)])
        return ReapedSessions()
    }

    private static func number(_ session: SessionID) -> [UInt8] { Array(String(session.rawValue).utf8) }
}
