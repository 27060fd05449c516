import SwitchboardCore
import SwitchboardRedis
import SwitchboardWire

/// Which node holds each session, so that another node can take a session over when its client
/// reconnects there with its resume ticket (`AdoptSession`).
///
/// Per user, `sb:ss:{app:user}`, a hash: session number → `node\nsecret`, under the tag of the
/// user's channel (the announcement of a take-over goes out on that channel). Per node,
/// `sb:sn:{node}`, the index of the entries it holds (`key\nsession`), so a reaper or the node's
/// next run finds them without a scan (a key of its own tag: fine on one Redis, as the online
/// sets' index is). Session numbers come from one counter (`sb:sessions:blocks`): each node run
/// takes a block of 2^32 numbers, so a number names one session on every node.
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

    /// Records session ARGV[1] of the user (KEYS[1]) as node ARGV[2]'s with secret ARGV[3], in the
    /// node's index (KEYS[2]).
    static let record = RedisScript(
        """
        redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '\\n' .. ARGV[3])
        redis.call('SADD', KEYS[2], KEYS[1] .. '\\n' .. ARGV[1])
        return 1
        """)

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
    /// ARGV[3] and another node, not marked reaped (KEYS[3]), holds it; moves the entry from that
    /// node's index to this one's (KEYS[2]; the former index's name is built from its id).
    /// Returns the former node's id, or false.
    static let adopt = RedisScript(
        DeadNodes.escapeFunction + """
            local entry = redis.call('HGET', KEYS[1], ARGV[1])
            if not entry then return false end
            local newline = string.find(entry, '\\n', 1, true)
            local former, secret = string.sub(entry, 1, newline - 1), string.sub(entry, newline + 1)
            if secret ~= ARGV[3] or former == ARGV[2] then return false end
            if redis.call('ZSCORE', KEYS[3], escaped(former)) then return false end
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '\\n' .. secret)
            redis.call('SREM', 'sb:sn:{' .. escaped(former) .. '}', KEYS[1] .. '\\n' .. ARGV[1])
            redis.call('SADD', KEYS[2], KEYS[1] .. '\\n' .. ARGV[1])
            return former
            """)

    /// Forgets every entry node ARGV[1] still holds (its index, KEYS[1]): the node was reaped
    /// (KEYS[2] marks it; with ARGV[2] = `1` the mark is not asked for: the node's own next run).
    /// Returns how many it held.
    static let drop = RedisScript(
        DeadNodes.escapeFunction + """
            if ARGV[2] ~= '1' and not redis.call('ZSCORE', KEYS[2], escaped(ARGV[1])) then return -1 end
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

    /// The first number of this node run's block: its sessions are numbered after it.
    func reserveNumbers() async throws(RedisError) -> UInt64 {
        let block = try await redis.run(Self.reserve, keys: [Self.blocksKey], arguments: []).integer ?? 0
        return UInt64(max(block, 1)) << 32
    }

    /// Records `caller`'s session as this node's, resumable with `secret`.
    func record(_ caller: Caller, secret: String) async throws(RedisError) {
        _ = try await redis.run(
            Self.record, keys: [Self.key(of: caller.user), Self.indexKey(of: nodeID)],
            arguments: [Self.number(caller.session), Array(nodeID.utf8), Array(secret.utf8)])
    }

    /// Forgets `caller`'s session if this node still holds it.
    func forget(_ caller: Caller) async throws(RedisError) {
        _ = try await redis.run(
            Self.forget, keys: [Self.key(of: caller.user), Self.indexKey(of: nodeID)],
            arguments: [Self.number(caller.session), Array(nodeID.utf8)])
    }

    /// Takes `ticket`'s session of `user` over for this node; the former node's id, or nil.
    func adopt(_ ticket: ResumeTicket, of user: UserKey) async throws(RedisError) -> String? {
        let reply = try await redis.run(
            Self.adopt, keys: [Self.key(of: user), Self.indexKey(of: nodeID), Array(DeadNodes.reapedKey.utf8)],
            arguments: [Self.number(ticket.session), Array(nodeID.utf8), Array(ticket.secret.utf8)])
        return reply.string
    }

    /// Forgets the entries of this node's earlier run (called as the node starts).
    func dropEarlierRun() async throws(RedisError) {
        _ = try await redis.run(
            Self.drop, keys: [Self.indexKey(of: nodeID), Array(DeadNodes.reapedKey.utf8)], arguments: [Array(nodeID.utf8), Array("1".utf8)])
    }

    func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws {
        _ = try await redis.run(
            Self.drop, keys: [Self.indexKey(of: node), Array(DeadNodes.reapedKey.utf8)], arguments: [Array(node.utf8), Array("0".utf8)])
    }

    private static func number(_ session: SessionID) -> [UInt8] { Array(String(session.rawValue).utf8) }
}

/// `["moved", former node, app, user, session, taking node]`, published on the user's channel
/// when a node takes a session over: the former node, if alive, ends its copy
/// (`EndMovedSession`).
struct MovedSessionAnnouncement: Sendable, Hashable {
    /// The node that held the session.
    var former: String
    /// The session.
    var caller: Caller
    /// The node that holds it now.
    var taker: String

    init(former: String, caller: Caller, taker: String) {
        self.former = former
        self.caller = caller
        self.taker = taker
    }

    /// Reads an announcement; nil when `bytes` are not one.
    init?(decoding bytes: [UInt8]) {
        var reader = MessagePackReader(bytes)
        guard (try? reader.readArrayHeader()) == 6, (try? reader.readString()) == "moved",
            let former = try? reader.readString(), let app = try? reader.readString(), let userId = try? reader.readString(),
            let session = try? reader.readInteger(UInt64.self), let taker = try? reader.readString(), reader.isAtEnd
        else { return nil }
        self.init(former: former, caller: Caller(app: app, userId: userId, session: SessionID(session)), taker: taker)
    }

    func encoded() -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: 64)
        writer.writeArrayHeader(6)
        writer.writeString("moved")
        writer.writeString(former)
        writer.writeString(caller.app)
        writer.writeString(caller.userId)
        writer.writeUInt(caller.session.rawValue)
        writer.writeString(taker)
        return writer.bytes
    }
}
