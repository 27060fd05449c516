import SwitchboardCluster
import SwitchboardCore
import SwitchboardLock
import SwitchboardRedis
import SwitchboardWire

/// Locks in the cluster's Redis, shared by every node: one Lua script per atomic operation
/// (`LockScripts`) runs the rules of the in-memory `LockTable`, and publishes each change of a
/// channel's locks, numbered, for the nodes whose members and waiters are there.
///
/// - Sessions: a session id means something only on its node (each node numbers its own), so an
///   owner or waiter is `node:session`; grants and ended waits of another node's sessions are
///   that node's to tell, and this store leaves them out of what it returns and reads back.
/// - Fencing tokens: one counter per channel (`…:token`), bumped in the script that grants, never
///   reset: a lock's tokens only grow, across a removal, a new `setLock` and a restart of Redis
///   that kept its file (`appendfsync always`).
/// - Ttl: countdowns in wall-clock milliseconds (`sb:lk:countdowns`), so every node's sweep
///   (`expire`) reads the same deadline; each hand-over is in the sweeping script, so two nodes
///   sweeping at once hand a lock over once.
/// - A node that dies is reaped by another, or by its own next run as it starts (`ClusterLink`;
///   `reapSessions(ofNode:lastBeat:)`): its sessions leave every line, and its locks count down
///   their ttl from its last beat, then go to the next in line by the sweep, unless a session is
///   taken over first (a node's id must be unique).
public final class RedisLockStore: LockStore, DeadNodeStep {
    /// The Redis every node shares.
    public let configuration: RedisConfiguration
    /// This node's id in the cluster.
    public let nodeID: String
    /// This node's sessions as the store records them.
    private let sessions: NodeSessions
    private let line = RedisLine()

    /// The store of node `nodeID` on the cluster's Redis of `configuration`; it connects in `open`.
    public init(configuration: RedisConfiguration, nodeID: String) {
        self.configuration = configuration
        self.nodeID = nodeID
        sessions = NodeSessions(nodeID: nodeID)
    }

    /// True while the connection to Redis is up.
    public var isConnected: Bool { line.isConnected }

    public func open() async throws {
        try await line.open(configuration, keeping: "locks") {
            LockStoreStartupError(description: $0)
        }
    }

    public func close() async { await line.close() }

    /// A dead node's session that no node took over ends: it leaves every line it is still in,
    /// and a lock it still holds goes to the next in line (reported as the hand-over comes).
    public func endOrphan(_ session: SessionID, ofNode node: String) async throws -> ReapedSessions {
        _ = try await changes(LockScripts.end, [NodeSessions.id(session, ofNode: node), now()], "endOrphan")
        return ReapedSessions()
    }

    public func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions {
        // Nothing to report: a lock held counts down, and its hand-over is reported when it comes.
        _ = try await endSessions(ofNode: KeyPart.escaped(node), now: String(lastBeat.millisecondsSince1970), lastBeat: lastBeat)
        return ReapedSessions()
    }

    /// Ends every session of node `node` (escaped): at once, as for this node's earlier run, or,
    /// for a node that died at `lastBeat`, with its locks counting down their ttl from then.
    private func endSessions(ofNode node: String, now: String, lastBeat: WallClockTime? = nil) async throws(LockRefusal) -> [LockEffect] {
        let dead = lastBeat.map { [String($0.millisecondsSince1970)] } ?? []
        return try await changes(LockScripts.end, [node + ":", now] + dead, lastBeat == nil ? "open" : "reap")
    }

    public var publishesEffects: Bool { true }

    public func change(publishedAs payload: [UInt8]) -> PublishedLockChange? {
        try? decodeChange(payload)
    }

    // MARK: Operations

    public func setLock(
        _ name: String, in channel: ChannelKey, ttl: Int, maxLocks: Int, maxLocksInApp: Int
    ) async throws(LockRefusal) -> [LockEffect] {
        let reply = try await run(
            LockScripts.set, [tag(channel), KeyPart.escaped(channel.app), name, String(ttl), String(maxLocks), String(maxLocksInApp)],
            SetLock.operation)
        return try outcome(reply, SetLock.operation, limits: (maxLocks, maxLocksInApp)).effects
    }

    public func removeLock(_ name: String, in channel: ChannelKey) async throws(LockRefusal) -> [LockEffect] {
        let reply = try await run(LockScripts.remove, [tag(channel), KeyPart.escaped(channel.app), name], RemoveLock.operation)
        return try outcome(reply, RemoveLock.operation).effects
    }

    public func acquireLock(
        _ name: String, in channel: ChannelKey, by caller: Caller, wait: Bool, now: WallClockTime
    ) async throws(LockRefusal) -> (LockAcquisition, [LockEffect]) {
        let reply = try await run(
            LockScripts.acquire,
            [tag(channel), name, id(caller.session), caller.userId, wait ? "1" : "0", String(now.millisecondsSince1970)],
            AcquireLock.operation)
        let (status, value, effects) = try outcome(reply, AcquireLock.operation)
        return (status == 2 ? .queued : .acquired(fencingToken: UInt64(value)), effects)
    }

    public func releaseLock(_ name: String, in channel: ChannelKey, by caller: Caller, now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        let reply = try await run(
            LockScripts.release, [tag(channel), name, id(caller.session), String(now.millisecondsSince1970)], ReleaseLock.operation)
        return try outcome(reply, ReleaseLock.operation).effects
    }

    public func revokeLock(_ name: String, in channel: ChannelKey, from owner: UserID, now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        let reply = try await run(
            LockScripts.revoke, [tag(channel), name, owner, String(now.millisecondsSince1970)], RevokeLock.operation)
        return try outcome(reply, RevokeLock.operation).effects
    }

    public func locks(in channel: ChannelKey) async throws(LockRefusal) -> [LockDetail] {
        try await snapshot(of: channel).locks
    }

    public func snapshot(of channel: ChannelKey) async throws(LockRefusal) -> LockSnapshot {
        let reply = try await run(LockScripts.snapshot, [tag(channel)], GetLocks.operation)
        guard let parts = reply.elements, parts.count == 2, let sequence = parts[0].integer, let flat = parts[1].elements,
            flat.count % 4 == 0
        else { throw Self.unexpected(reply) }
        var locks: [LockDetail] = []
        for at in stride(from: 0, to: flat.count, by: 4) {
            guard let name = flat[at].string, let owner = flat[at + 1].string, let ttl = flat[at + 2].integer,
                let token = flat[at + 3].integer
            else { throw Self.unexpected(reply) }
            locks.append(LockDetail(lockName: name, owner: owner, ttl: Int(ttl), fencingToken: UInt64(token)))
        }
        return LockSnapshot(locks: locks, sequence: UInt64(sequence))
    }

    public func holder(of name: String, in channel: ChannelKey) async throws(LockRefusal) -> LockHolding? {
        let reply = try await run(LockScripts.holder, [tag(channel), name], CheckLockHolder.operation)
        guard let parts = reply.elements, let found = parts.first?.integer else { throw Self.unexpected(reply) }
        guard found == 1 else { throw .notExist }
        guard parts.count == 4, let owner = parts[1].string, let user = parts[2].string, let token = parts[3].integer else {
            throw Self.unexpected(reply)
        }
        guard !owner.isEmpty else { return nil }
        let ours = session(of: owner)
        return LockHolding(session: ours ?? SessionID(0), userId: user, fencingToken: UInt64(token), onAnotherNode: ours == nil)
    }

    public func sessionSuspended(_ session: SessionID, now: WallClockTime) async throws(LockRefusal) {
        _ = try await run(LockScripts.suspend, [id(session), String(now.millisecondsSince1970)], "sessionSuspended")
    }

    public func sessionResumed(_ session: SessionID) async throws(LockRefusal) {
        _ = try await run(LockScripts.resume, [id(session)], "sessionResumed")
    }

    public func takeOver(_ session: SessionID, fromNode node: String) async throws(LockRefusal) {
        _ = try await run(LockScripts.takeOver, [NodeSessions.id(session, ofNode: node), id(session)], "takeOver")
    }

    public func sessionEnded(_ session: SessionID, now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        try await changes(LockScripts.end, [id(session), String(now.millisecondsSince1970)], "sessionClosed")
    }

    public func sessionLeft(_ session: SessionID, channel: ChannelKey, now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        try await changes(LockScripts.leave, [id(session), tag(channel), String(now.millisecondsSince1970)], "channelLeft")
    }

    public func expire(now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        try await changes(LockScripts.expire, [String(now.millisecondsSince1970), String(Self.expiryBatch)], "expire")
    }

    public func counts(in app: AppID?) async throws(LockRefusal) -> LockCounts {
        var counts = LockCounts()
        var cursor = "0"
        repeat {
            let reply = try await call("counts") { [cursor] client throws(RedisError) in
                try await client.send(["SCAN", cursor, "MATCH", LockKeys.everyLockHash(of: app), "COUNT", "1000"])
            }
            guard let parts = reply.elements, parts.count == 2, let next = parts[0].string else { throw Self.unexpected(reply) }
            for hash in parts[1].elements?.compactMap(\.string) ?? [] {
                // sb:lk:{tag}:locks
                guard hash.hasPrefix("sb:lk:{"), hash.hasSuffix("}:locks") else { continue }
                let tag = String(hash.dropFirst("sb:lk:{".count).dropLast("}:locks".count))
                let reply = try await run(LockScripts.tally, [tag], "counts")
                guard let values = reply.elements?.compactMap(\.integer), values.count == 3 else { throw Self.unexpected(reply) }
                counts.locks += Int(values[0])
                counts.held += Int(values[1])
                counts.waiters += Int(values[2])
            }
            cursor = next
        } while cursor != "0"
        return counts
    }

    // MARK: Steps

    /// Locks whose ttl ran out that one sweep hands over at most (the next sweep takes the rest).
    private static let expiryBatch = 256

    private func tag(_ channel: ChannelKey) -> String { LockKeys(channel).tag }

    /// `node:session`: a session as the store records it.
    private func id(_ session: SessionID) -> String { sessions.id(session) }

    /// The session of this node that `id` names; nil for another node's.
    private func session(of id: String) -> SessionID? { sessions.session(of: id) }

    /// The wall time an orphaned session's locks are handed over at (a waiter that is itself
    /// suspended starts its ttl from it); nothing else here reads a clock.
    private func now() -> String { String(SystemClock().wallNow.millisecondsSince1970) }

    /// Runs a script that answers the changes it published.
    private func changes(_ script: RedisScript, _ arguments: [String], _ operation: String) async throws(LockRefusal) -> [LockEffect] {
        let reply = try await run(script, arguments, operation)
        guard let blobs = reply.elements else { throw Self.unexpected(reply) }
        return try effects(in: blobs)
    }

    /// `{status, value, changes}` as the status and value and this node's effects; a refusal as
    /// the `LockRefusal` it names.
    private func outcome(
        _ reply: RESPValue, _ operation: String, limits: (perChannel: Int, perApp: Int) = (0, 0)
    ) throws(LockRefusal) -> (status: Int64, value: Int64, effects: [LockEffect]) {
        guard let parts = reply.elements, let status = parts.first?.integer else { throw Self.unexpected(reply) }
        guard status != 0 else {
            let owner = parts.count > 2 ? parts[2].string ?? "" : ""
            switch parts.count > 1 ? parts[1].string : nil {
            case "notExist": throw .notExist
            case "alreadyExists": throw .alreadyExists
            case "tooManyLocks": throw .tooManyLocks(limit: limits.perChannel)
            case "tooManyLocksInApp": throw .tooManyLocksInApp(limit: limits.perApp)
            case "heldByOther": throw .heldByOther(owner: owner)
            case "notOwner": throw .notOwner(owner: owner)
            case "alreadyWaiting": throw .alreadyWaiting
            default: throw Self.unexpected(reply)
            }
        }
        guard parts.count == 3, let value = parts[1].integer, let blobs = parts[2].elements else { throw Self.unexpected(reply) }
        return (status, value, try effects(in: blobs))
    }

    private func effects(in blobs: [RESPValue]) throws(LockRefusal) -> [LockEffect] {
        var effects: [LockEffect] = []
        for blob in blobs {
            guard case .bulkString(let bytes) = blob, let change = try? decodeChange(bytes) else { throw Self.unexpected(blob) }
            effects += change.effects
        }
        return effects
    }

    /// A published change, `[tag, seq, effects]` (`LockScripts`), with the grants and ended waits
    /// of this node's sessions only.
    private func decodeChange(_ payload: [UInt8]) throws -> PublishedLockChange? {
        var reader = MessagePackReader(payload)
        guard try reader.readArrayHeader() == 3, let channel = LockKeys.channel(ofTag: Substring(try reader.readString())) else {
            return nil
        }
        let sequence = try reader.readInteger(UInt64.self)
        var effects: [LockEffect] = []
        for _ in 0..<(try reader.readArrayHeader()) {
            let count = try reader.readArrayHeader()
            switch try reader.readInteger(Int.self) {
            case 1 where count == 6:
                guard let type = RtmLockEventType(rawValue: try reader.readInteger(Int.self)) else { return nil }
                let name = try reader.readString(), owner = try reader.readString()
                let ttl = try reader.readInteger(Int.self), token = try reader.readInteger(UInt64.self)
                effects.append(.event(channel, type, LockDetail(lockName: name, owner: owner, ttl: ttl, fencingToken: token)))
            case 2 where count == 4:
                let id = try reader.readString(), name = try reader.readString(), token = try reader.readInteger(UInt64.self)
                if let session = session(of: id) { effects.append(.granted(session, channel, lockName: name, fencingToken: token)) }
            case 3 where count == 4:
                let id = try reader.readString(), name = try reader.readString()
                let why: LockWaitEnd
                switch try reader.readInteger(Int.self) {
                case 1: why = .lockRemoved
                case 2: why = .leftChannel
                case 3: why = .withdrawn
                default: return nil
                }
                if let session = session(of: id) { effects.append(.waitEnded(session, channel, lockName: name, why)) }
            default:
                return nil
            }
        }
        return reader.isAtEnd ? PublishedLockChange(channel: channel, sequence: sequence, effects: effects) : nil
    }

    private func run(_ script: RedisScript, _ arguments: [String], _ operation: String) async throws(LockRefusal) -> RESPValue {
        try await call(operation) { client throws(RedisError) in
            try await client.run(script, keys: [], arguments: arguments.map { Array($0.utf8) })
        }
    }

    /// Calls Redis with the connected client; its failures as `LockRefusal.unavailable`.
    private func call<T>(_ operation: String, _ body: (RedisClient) async throws(RedisError) -> T) async throws(LockRefusal) -> T {
        do {
            return try await body(try line.client())
        } catch {
            switch error {
            case .timedOut, .connectionLost:
                throw .unavailable(
                    timedOut: true, reason: "the cluster's Redis did not answer \(operation); it may or may not have been carried out: \(error)")
            default:
                throw .unavailable(timedOut: false, reason: "the cluster's Redis cannot take \(operation): \(error)")
            }
        }
    }

    private static func unexpected(_ reply: RESPValue) -> LockRefusal {
        .unavailable(timedOut: false, reason: "an unexpected reply from Redis: \(reply)")
    }
}

/// The Redis lock store could not start; the message names the Redis and what failed.
public struct LockStoreStartupError: Error, CustomStringConvertible {
    public let description: String
}
