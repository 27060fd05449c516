import Foundation
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardStorage

/// Metadata in the cluster's Redis, shared by every node: one Lua script per atomic operation
/// (`MetadataScripts`) runs the compare-and-set rules, bumps the set's revision, saves it, keeps
/// the store's indexes and publishes the change for the other nodes' listeners.
///
/// - Revisions: one sequence per set (`MetadataKeys.revision`), kept when the set is removed, so a
///   set's revisions only grow, are never reused and have no holes: every change takes the next.
/// - Leases: an index of the sets with a time-to-live item (`MetadataKeys.leases`), which every
///   node's sweep reads; each removal is one script, so two nodes sweeping at once remove an item
///   once.
/// - Sessions: a session id means something only on its node (each node numbers its own), so a
///   session-bound item records `node:session` and `removeItems(of:)` removes this node's
///   session's items only; a dead node's (or this node's earlier run's) go as each of its
///   sessions ends untaken (`endOrphan`), and what is left after its last (`endLeftovers`).
/// - Locks: with `locksInRedis` (the cluster's locks are in the same Redis, `RedisLockStore`), a
///   write under a lock is checked where the lock is, in the write's own script: the writer's
///   session must hold it now, with the token it was checked with; so a holder on any node is
///   honoured and anyone else refused, whatever happened between the lock module's check and the
///   write. Fences are then per lock (its tokens are the cluster's and only grow). Without it,
///   fences are per node and lock, and per run of the node: a restarted node's lock module counts
///   its tokens again, and the tokens of its earlier run do not count.
/// - Durability: a write is answered once Redis answered the script; what that promises depends
///   on Redis's settings (docs/CLUSTER.md).
public final class RedisMetadataStore: MetadataStore, DeadNodeStep {
    /// The Redis every node shares.
    public let configuration: RedisConfiguration
    /// This node's id in the cluster.
    public let nodeID: String
    /// `nodeID` as a key part.
    private let node: String
    /// This run of the node, for its fences.
    private let run = UUID().uuidString.lowercased()
    private let line = RedisLine()
    /// True when the locks writes are made under live in the same Redis (`RedisLockStore`).
    public let locksInRedis: Bool

    /// The store of node `nodeID` on the cluster's Redis of `configuration`; it connects in `open`.
    /// With `locksInRedis`, a write under a lock checks the lock there (`RedisLockStore`'s).
    public init(configuration: RedisConfiguration, nodeID: String, locksInRedis: Bool = false) {
        self.configuration = configuration
        self.nodeID = nodeID
        self.locksInRedis = locksInRedis
        node = KeyPart.escaped(nodeID)
    }

    public var location: String { "Redis \(configuration.url)" }

    /// True while the connection to Redis is up.
    public var isConnected: Bool { line.isConnected }

    public func open() async throws(StorageStartupError) {
        do {
            try await line.connect(configuration)
        } catch {
            throw StorageStartupError("metadata in \(location): cannot connect: \(error)")
        }
    }

    public func read(_ target: MetadataTarget) async throws(RtmError) -> StoredSet? {
        let reply = try await call("read") { client throws(RedisError) in
            try await client.send(bytes: [Command.get, MetadataKeys(target).set])
        }
        return try set(in: reply, operation: "read")
    }

    public func latestChange(of target: MetadataTarget) async throws(RtmError) -> MetadataCommit {
        let keys = MetadataKeys(target)
        let reply = try await call("read") { client throws(RedisError) in
            try await client.send(bytes: [Command.mget, keys.set, keys.revision])
        }
        guard let values = reply.elements, values.count == 2 else { throw Self.unexpected(reply, operation: "read") }
        let set = try set(in: values[0], operation: "read")
        return MetadataCommit(target: target, set: set, revision: values[1].string.flatMap { Int64($0) } ?? 0)
    }

    public func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        let keys = MetadataKeys(target)
        var fence = write.fence.map { ["\(node):\($0.lockName)", run, String($0.token)] } ?? ["", "", ""]
        var lock = ["", "", ""]
        if locksInRedis, let writeFence = write.fence, let session = writeFence.session, case .channel(let channel) = target {
            fence = [writeFence.lockName, "", String(writeFence.token)]
            lock = [String(decoding: LockKeys(channel).locks, as: UTF8.self), writeFence.lockName, "\(node):\(session.rawValue)"]
        }
        let head = [
            Self.kind(write.kind), String(write.expectedMajorRevision), String(write.updateTs), write.author,
            String(limits.storage.itemsPerSet), String(limits.storage.setMaxBytes),
        ] + fence + lock + [String(write.items.count)]
        var arguments = head.map { Array($0.utf8) }
        for item in write.items {
            let lease = [item.expiresAt.map(String.init) ?? "", item.session.map { "\(node):\($0.rawValue)" } ?? ""]
            arguments += [Array(item.key.utf8), item.value]
            arguments += ([String(item.size), String(item.expectedRevision)] + lease).map { Array($0.utf8) }
        }
        let reply = try await run(MetadataScripts.write, on: keys, arguments, operation: write.operation)
        if let commit = try commit(in: reply, of: target, operation: write.operation) { return commit }
        throw try refusal(in: reply, of: write, limits: limits).error(operation: write.operation)
    }

    public func removeExpired(now: WallClockTime) async throws(RtmError) -> [MetadataCommit] {
        let milliseconds = Array(String(now.millisecondsSince1970).utf8)
        var commits: [MetadataCommit] = []
        for _ in 0..<Self.sweepBatches {
            let reply = try await call("expire") { client throws(RedisError) in
                try await client.send(bytes: [
                    Command.zrangebyscore, MetadataKeys.leases, Array("-inf".utf8), milliseconds, Command.limit,
                    Array("0".utf8), Array(String(Self.sweepBatch).utf8),
                ])
            }
            let tags = reply.elements?.compactMap(Self.bytes) ?? []
            for tag in tags {
                guard let target = MetadataKeys.target(ofTag: Substring(String(decoding: tag, as: UTF8.self))) else {
                    _ = try await call("expire") { client throws(RedisError) in
                        try await client.send(bytes: [Command.zrem, MetadataKeys.leases, tag])
                    }
                    continue
                }
                let reply = try await run(MetadataScripts.expire, on: MetadataKeys(target), [milliseconds], operation: "expire")
                if let commit = try commit(in: reply, of: target, operation: "expire") { commits.append(commit) }
            }
            if tags.count < Self.sweepBatch { break }
        }
        return commits
    }

    public func removeItems(of session: SessionID) async throws(RtmError) -> [MetadataCommit] {
        try await removeBound(prefix: "\(node):\(session.rawValue):")
    }

    /// A dead node's sessions keep their items while they wait for a take-over.
    public func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions { ReapedSessions() }

    /// The items of a dead node's session that no node took over go, each change published to
    /// the listeners of every node and reported once (by the webhooks of the node that ends it) as
    /// `metadata.changed` with no author, as a session's end on its own node is.
    public func endOrphan(_ session: SessionID, ofNode node: String) async throws -> ReapedSessions {
        Self.reported(try await removeBound(prefix: NodeSessions.id(session, ofNode: node) + ":"))
    }

    /// The items left of a dead node's sessions go, reported as `endOrphan`'s.
    public func endLeftovers(ofNode node: String) async throws -> ReapedSessions {
        Self.reported(try await removeItems(ofNode: KeyPart.escaped(node)))
    }

    /// `commits` as the changes a dead node's sessions' ends made.
    private static func reported(_ commits: [MetadataCommit]) -> ReapedSessions {
        ReapedSessions(
            metadata: commits.map { MetadataChanged(target: $0.target, author: "", revision: $0.revision, itemCount: $0.set?.items.count ?? 0) })
    }

    /// Removes the items of every session of node `node` (escaped), each change published as for
    /// a session's end: what is left of a dead node after its last session ended.
    private func removeItems(ofNode node: String) async throws(RtmError) -> [MetadataCommit] {
        try await removeBound(prefix: "\(node):")
    }

    public func hasItems() async throws(RtmError) -> Bool {
        var cursor = "0"
        repeat {
            let reply = try await call("open") { [cursor] client throws(RedisError) in
                try await client.send(["SCAN", cursor, "MATCH", MetadataKeys.everySet, "COUNT", "1000"])
            }
            guard let parts = reply.elements, parts.count == 2, let next = parts[0].string else {
                throw Self.unexpected(reply, operation: "open")
            }
            if !(parts[1].elements ?? []).isEmpty { return true }
            cursor = next
        } while cursor != "0"
        return false
    }

    public func sealingMarker() async throws(RtmError) -> [UInt8]? {
        let reply = try await call("open") { client throws(RedisError) in
            try await client.send(bytes: [Command.get, MetadataKeys.sealingMarker])
        }
        return Self.bytes(reply)
    }

    public func setSealingMarker(_ marker: [UInt8]) async throws(RtmError) {
        let reply = try await call("open") { client throws(RedisError) in
            try await client.send(bytes: [Array("SET".utf8), MetadataKeys.sealingMarker, marker, Array("NX".utf8)])
        }
        guard reply == .null else { return }
        // Another node sealed its marker first: this node's key is checked against it at its next start.
        throw RtmError(
            .storageOperationFailed, operation: "open",
            reason: "another node set the sealing marker meanwhile; start again to check the storage key against it")
    }

    public func close() async { await line.close() }

    /// Every change is published by the script that commits it, with the set's next revision.
    public var publishesChanges: Bool { true }

    public func change(publishedAs payload: [UInt8], of target: MetadataTarget) -> MetadataCommit? {
        try? StoredSetCodec.change(payload, of: target)
    }

    // MARK: Steps

    /// Binds the items of node `node`'s session of that number here, one script per set.
    public func takeOver(_ session: SessionID, fromNode node: String) async throws(RtmError) {
        let old = NodeSessions.id(session, ofNode: node)
        let new = "\(self.node):\(session.rawValue)"
        let start = Array("[\(old):".utf8)
        let reply = try await call("takeOver") { client throws(RedisError) in
            try await client.send(bytes: [Command.zrangebylex, MetadataKeys.bound, start, start + [0xFF]])
        }
        for entry in reply.elements?.compactMap(Self.bytes) ?? [] {
            let tag = String(decoding: entry.dropFirst(old.utf8.count + 1), as: UTF8.self)
            guard let target = MetadataKeys.target(ofTag: Substring(tag)) else { continue }
            _ = try await run(MetadataScripts.rebind, on: MetadataKeys(target), [Array(old.utf8), Array(new.utf8)], operation: "takeOver")
        }
    }

    /// Removes the items of the sessions whose entries in `bound` start with `prefix` (`node:` for
    /// all of this node's, `node:session:` for one), one script per set.
    private func removeBound(prefix: String) async throws(RtmError) -> [MetadataCommit] {
        let start = Array("[\(prefix)".utf8)
        let reply = try await call("sessionClosed") { client throws(RedisError) in
            try await client.send(bytes: [Command.zrangebylex, MetadataKeys.bound, start, start + [0xFF]])
        }
        var commits: [MetadataCommit] = []
        for entry in reply.elements?.compactMap(Self.bytes) ?? [] {
            // node:session:tag
            let parts = entry.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3,
                let target = MetadataKeys.target(ofTag: Substring(String(decoding: parts[2], as: UTF8.self)))
            else {
                _ = try await call("sessionClosed") { client throws(RedisError) in
                    try await client.send(bytes: [Command.zrem, MetadataKeys.bound, entry])
                }
                continue
            }
            let session = Array(parts[0]) + [UInt8(ascii: ":")] + Array(parts[1])
            let reply = try await run(MetadataScripts.endSession, on: MetadataKeys(target), [session, entry], operation: "sessionClosed")
            if let commit = try commit(in: reply, of: target, operation: "sessionClosed") { commits.append(commit) }
        }
        return commits
    }

    /// Runs `script` on the keys of one set and the indexes, its tag and channel first.
    private func run(
        _ script: RedisScript, on keys: MetadataKeys, _ arguments: [[UInt8]], operation: String
    ) async throws(RtmError) -> RESPValue {
        let tag = Array(keys.tag.utf8)
        let channel = keys.channel.name
        return try await call(operation) { client throws(RedisError) in
            try await client.run(
                script, keys: [keys.set, keys.revision, keys.fences, MetadataKeys.leases, MetadataKeys.bound],
                arguments: [tag, channel] + arguments)
        }
    }

    /// Calls Redis with the connected client; its failures as the storage codes.
    private func call<T>(
        _ operation: String, _ body: (RedisClient) async throws(RedisError) -> T
    ) async throws(RtmError) -> T {
        do {
            return try await body(try line.client())
        } catch {
            throw Self.error(error, operation: operation)
        }
    }

    // MARK: Replies

    /// The commit in a script's `{1, revision, set}`; nil for `{0, …}`.
    private func commit(in reply: RESPValue, of target: MetadataTarget, operation: String) throws(RtmError) -> MetadataCommit? {
        guard let values = reply.elements, let outcome = values.first?.integer else { throw Self.unexpected(reply, operation: operation) }
        guard outcome == 1 else { return nil }
        guard values.count == 3, let revision = values[1].integer else { throw Self.unexpected(reply, operation: operation) }
        return MetadataCommit(target: target, set: try set(in: values[2], operation: operation), revision: revision)
    }

    /// The set in a reply (a bulk string, or nothing).
    private func set(in reply: RESPValue, operation: String) throws(RtmError) -> StoredSet? {
        guard reply != .null else { return nil }
        guard let blob = Self.bytes(reply) else { throw Self.unexpected(reply, operation: operation) }
        do {
            return try StoredSetCodec.set(blob)
        } catch {
            throw RtmError(.storageOperationFailed, operation: operation, reason: "a stored set cannot be read: \(error)")
        }
    }

    /// The refusal in the write script's `{0, kind, …}`, with what the write asked for.
    private func refusal(in reply: RESPValue, of write: MetadataWrite, limits: Limits) throws(RtmError) -> MetadataRefusal {
        let values = reply.elements ?? []
        let detail = values.count > 2 ? values[2] : .null
        switch values.count > 1 ? values[1].string : nil {
        case "noMetadata":
            return .noMetadata(expectedMajorRevision: write.expectedMajorRevision)
        case "outdatedMajor":
            return .outdatedMajorRevision(stored: detail.integer ?? 0, expected: write.expectedMajorRevision)
        case "nothingToRemove":
            return .nothingToRemove
        case "noItem":
            return .noItem(key: detail.string ?? "")
        case "outdatedItem":
            let key = detail.string ?? ""
            let expected = write.items.first { $0.key == key }?.expectedRevision ?? -1
            return .outdatedItemRevision(key: key, stored: values.count > 3 ? values[3].integer ?? 0 : 0, expected: expected)
        case "tooManyItems":
            return .tooManyItems(count: Int(detail.integer ?? 0), limit: limits.storage.itemsPerSet)
        case "tooLarge":
            return .tooLarge(bytes: Int(detail.integer ?? 0), limit: limits.storage.setMaxBytes)
        case "noLock":
            return .noLock(lockName: write.fence?.lockName ?? "")
        case "notHolder":
            return .lockNotHeld(
                lockName: write.fence?.lockName ?? "", holder: detail.string ?? "",
                current: values.count > 3 ? values[3].string.flatMap { UInt64($0) } : nil)
        case "staleFence":
            return .staleFence(
                lockName: write.fence?.lockName ?? "", token: write.fence?.token ?? 0,
                committed: detail.string.flatMap { UInt64($0) } ?? 0)
        default:
            throw Self.unexpected(reply, operation: write.operation)
        }
    }

    private static func bytes(_ value: RESPValue) -> [UInt8]? {
        if case .bulkString(let bytes) = value { bytes } else { nil }
    }

    private static func unexpected(_ reply: RESPValue, operation: String) -> RtmError {
        RtmError(.storageOperationFailed, operation: operation, reason: "an unexpected reply from Redis: \(reply)")
    }

    /// A Redis failure as the storage code a client is answered with.
    static func error(_ error: RedisError, operation: String) -> RtmError {
        switch error {
        case .unavailable, .closed, .connectFailed:
            RtmError(.storageNotAvailable, operation: operation, reason: "the cluster's Redis cannot be reached: \(error)")
        case .timedOut, .connectionLost:
            RtmError(
                .storageOperationTimeout, operation: operation,
                reason: "the cluster's Redis did not answer; a change may or may not have been made: \(error)")
        case .reply(let kind, _) where notReadyReplies.contains(kind):
            RtmError(.storageNotAvailable, operation: operation, reason: "the cluster's Redis is not ready: \(error)")
        case .reply, .protocolViolation:
            RtmError(.storageOperationFailed, operation: operation, reason: "the cluster's Redis failed: \(error)")
        }
    }

    /// The error replies of a Redis that did not run the command and will later: loading its file
    /// after a restart, busy with a long script, a replica that lost its primary.
    private static let notReadyReplies: Set<String> = ["LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN"]

    private static func kind(_ kind: MetadataWriteKind) -> String {
        switch kind {
        case .set: "set"
        case .update: "update"
        case .remove: "remove"
        }
    }

    /// Sets whose leases are looked at per round of a sweep, and rounds at most per sweep.
    private static let sweepBatch = 256
    private static let sweepBatches = 64

    private enum Command {
        static let get = Array("GET".utf8)
        static let mget = Array("MGET".utf8)
        static let zrem = Array("ZREM".utf8)
        static let zrangebyscore = Array("ZRANGEBYSCORE".utf8)
        static let zrangebylex = Array("ZRANGEBYLEX".utf8)
        static let limit = Array("LIMIT".utf8)
    }
}
