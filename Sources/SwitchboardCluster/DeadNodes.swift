import SwitchboardCore
import SwitchboardRedis

/// A part of the cluster that keeps state for the sessions of every node (a store in the
/// cluster's Redis) and ends a dead node's share of it when the reaper asks: the hook through
/// which each store takes part in reaping (the lock store, the metadata store; a presence store
/// later), without the link importing any of them.
///
/// A dead node's sessions wait for another node to take them over, each for its presence timeout
/// from the node's last beat, as a session whose connection was lost waits for its client: when
/// the node is reaped, each step does what a lost connection does (`reapSessions`); when a
/// session's wait runs out untaken, what its end does (`endOrphan`); after the last one's wait,
/// what is left of the node's (`endLeftovers`: sessions the directory did not know).
public protocol DeadNodeStep: Sendable {
    /// What a lost connection does to the sessions of the dead node `node` (its id as configured)
    /// here; `lastBeat` is the wall-clock time of the node's last beat. Repeatable: a second call
    /// (another reaper, a retry) changes nothing more; does nothing once the node has come back
    /// (`DeadNodes.isReaped` no longer holds in Redis).
    ///
    /// Each of the three returns what it ended that the node doing it reports for the dead node
    /// (the webhooks of its sessions' ends), only the first time.
    func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions
    /// Ends what session `session` of the dead node `node` holds here, as its end would: its
    /// presence timeout ran out and no node took it over. Repeatable.
    func endOrphan(_ session: SessionID, ofNode node: String) async throws -> ReapedSessions
    /// Ends what is left here of the sessions of the dead node `node`, after the last of its
    /// sessions' waits. Repeatable.
    func endLeftovers(ofNode node: String) async throws -> ReapedSessions
}

extension DeadNodeStep {
    /// A step with nothing per session.
    public func endOrphan(_ session: SessionID, ofNode node: String) async throws -> ReapedSessions { ReapedSessions() }
    /// A step with nothing left after the waits.
    public func endLeftovers(ofNode node: String) async throws -> ReapedSessions { ReapedSessions() }
}

/// What ending a dead node's sessions' share did, for the node that ends it to report as the
/// dead node would have: the memberships that timed out, the metadata changes, the users now
/// online on no node. Empty when a step reports nothing (or ran before).
public struct ReapedSessions: Sendable, Hashable {
    /// The channel memberships of the node's sessions, each timed out.
    public var timedOut: [ChannelMemberTimedOut]
    /// The metadata changes the removal of their session-bound items made.
    public var metadata: [MetadataChanged]
    /// The users online on no node once the node left their online sets.
    public var usersOffline: [UserKey]

    /// Creates the report (empty by default).
    public init(timedOut: [ChannelMemberTimedOut] = [], metadata: [MetadataChanged] = [], usersOffline: [UserKey] = []) {
        self.timedOut = timedOut
        self.metadata = metadata
        self.usersOffline = usersOffline
    }

    /// Whether there is nothing to report.
    public var isEmpty: Bool { timedOut.isEmpty && metadata.isEmpty && usersOffline.isEmpty }
}

/// The names and scripts of reaping: finding the nodes whose liveness record expired, under one
/// lease, and marking each as reaped (`sb:reaped`, escaped node id → the wall-clock millisecond
/// its record expired), so that what it does if it wakes is refused where it matters (the lock
/// scripts) and its own beat learns it was reaped.
public enum DeadNodes {
    /// The sorted set of reaped nodes (`KeyPart`-escaped ids), scored by when their record expired.
    public static let reapedKey = "sb:reaped"
    /// The reapers' lease: the node that reaps now, for at most `leaseTime`.
    static let leaseKey = Array("sb:reaper".utf8)
    /// How long a reaper may hold the lease: a reaper that dies holding it delays the next by
    /// this much at most.
    static let leaseTime: Duration = .seconds(10)
    /// How long a reaped node's mark is kept when it never comes back.
    static let markKept: Duration = .seconds(7 * 24 * 3600)

    /// Lua: `escaped(id)`, the node id as a key part (`KeyPart.escaped`).
    public static let escapeFunction = """
        local function escaped(id)
          return (string.gsub(id, '[%%{}:]', function(c) return string.format('%%%02X', string.byte(c)) end))
        end

        """

    /// Lua: `isReaped(id)`, whether the node of a `node:session` id is marked reaped.
    public static let isReapedFunction = """
        local function isReaped(id)
          local colon = string.find(id, ':', 1, true)
          return colon ~= nil and redis.call('ZSCORE', '\(reapedKey)', string.sub(id, 1, colon - 1)) ~= false
        end

        """

    /// The sorted set of sessions another node took over (`node:session` as the old node named
    /// them), scored by when: the old node, should it still act for one (paused, it had not yet
    /// heard), is refused where the scripts check `isGone`. Kept a day.
    public static let movedKey = "sb:moved"

    /// Lua: `isGone(id)`, whether a `node:session` id may no longer act: its node is marked
    /// reaped, or another node took the session over (`movedKey`).
    public static let isGoneFunction = isReapedFunction + """
        local function isGone(id)
          return isReaped(id) or redis.call('ZSCORE', '\(movedKey)', id) ~= false
        end

        """

    /// The nodes whose record (KEYS[1]) expired before ARGV[1], if node ARGV[2] takes the lease
    /// (KEYS[3], for ARGV[3] ms): each but ARGV[2] itself is marked reaped in KEYS[2] (the first mark stays, so every
    /// reaper counts from the same expiry) and returned as `{node, expiry}`; marks older than
    /// ARGV[4] ms go. `{}` when none is dead or another node holds the lease.
    static let claim = RedisScript(
        escapeFunction + """
            local now = tonumber(ARGV[1])
            local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'WITHSCORES')
            if #dead == 0 then return {} end
            if not redis.call('SET', KEYS[3], ARGV[2], 'NX', 'PX', ARGV[3]) then return {} end
            redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[4]))
            local found = {}
            for i = 1, #dead, 2 do
              if dead[i] ~= ARGV[2] then
                redis.call('ZADD', KEYS[2], 'NX', dead[i + 1], escaped(dead[i]))
                found[#found + 1] = {dead[i], dead[i + 1]}
              end
            end
            return found
            """)

    /// Takes node ARGV[1] out of the records (KEYS[1]) if its record is still expired at ARGV[2]
    /// (it did not come back meanwhile). Returns 1 when it did.
    static let finish = RedisScript(
        """
        local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
        if expiry and tonumber(expiry) < tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
        return 0
        """)

    /// Gives the lease (KEYS[1]) back if node ARGV[1] holds it.
    static let release = RedisScript(
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)

    /// The claim script's arguments for reaper `node` at `now`.
    static func claimArguments(node: String, now: WallClockTime) -> [[UInt8]] {
        [String(now.millisecondsSince1970), node, milliseconds(leaseTime), milliseconds(markKept)].map { Array($0.utf8) }
    }

    private static func milliseconds(_ duration: Duration) -> String { String(Int64(duration / .milliseconds(1))) }

    /// The dead nodes the claim script answered, with when each one's record expired.
    static func claimed(_ reply: RESPValue) -> [(node: String, expiry: WallClockTime)] {
        (reply.elements ?? []).compactMap { entry in
            guard let parts = entry.elements, parts.count == 2, let node = parts[0].string,
                let expiry = parts[1].string.flatMap({ UInt64($0) })
            else { return nil }
            return (node, WallClockTime(millisecondsSince1970: expiry))
        }
    }
}
