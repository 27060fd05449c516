import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardWebhooks
import SwitchboardWire

/// The webhook queue of one node in the cluster's Redis, so that another node can take over what
/// waits in it when the node dies (`takeOver(queueOfNode:)`, the reaper's step for it).
///
/// - Keys: the node's deliveries in one hash, `sb:wh:{node}` (field: the sequence, value: the
///   delivery), and what other nodes' queues handed to it in a list, `sb:wh:{node}:handed`. A
///   hash rather than a stream: deliveries leave out of order (each receiver's line goes at its
///   own pace) and are renumbered when taken over, and a stream's ids only grow.
/// - Durability: each write is one script; with `appendfsync always` a delivery Redis
///   acknowledged survives a kill -9 of Redis as it survives one of the node (docs/CLUSTER.md).
/// - Taking over: one script moves the dead node's deliveries, in their order, and what was
///   handed to it, to the end of this node's list and deletes the dead node's keys, so two nodes
///   taking over at once take each delivery once. The module then keeps them as its own
///   (`keepAdopted`: into the hash, off the list, in one script) and sends them.
public final class RedisWebhookQueue: WebhookQueue, DeadNodeStep {
    /// The Redis every node shares.
    public let configuration: RedisConfiguration
    /// This node's id in the cluster.
    public let nodeID: String
    private let line = RedisLine()
    private let handedOver = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    /// The queue of node `nodeID` on the cluster's Redis of `configuration`; it connects in `open`.
    public init(configuration: RedisConfiguration, nodeID: String) {
        self.configuration = configuration
        self.nodeID = nodeID
    }

    /// True while the connection to Redis is up.
    public var isConnected: Bool { line.isConnected }

    /// The hash of `node`'s deliveries.
    static func deliveriesKey(of node: String) -> String { "sb:wh:{\(KeyPart.escaped(node))}" }
    /// The list of what was handed to `node`.
    static func handedKey(of node: String) -> String { deliveriesKey(of: node) + ":handed" }

    public func open() async throws(WebhookQueueFailure) -> [QueuedDelivery] {
        do {
            try await line.connect(configuration)
        } catch {
            throw WebhookQueueFailure("webhook queue in Redis \(configuration.url): cannot connect: \(error)")
        }
        do {
            let reply = try await line.client().send(["HGETALL", Self.deliveriesKey(of: nodeID)])
            let waiting = Self.fields(of: reply).compactMap { field, value in
                field.string.flatMap { Int64($0) }.flatMap { Self.decoded(Self.bytes(value), sequence: $0) }
            }
            return waiting.sorted { $0.sequence < $1.sequence }
        } catch {
            await line.close()
            throw WebhookQueueFailure("webhook queue in Redis \(configuration.url): cannot read it: \(error)")
        }
    }

    public func write(adding deliveries: [QueuedDelivery], removing removed: [Int64]) async throws(RtmError) {
        var arguments = [Array(Self.deliveriesKey(of: nodeID).utf8), Array(String(deliveries.count).utf8)]
        for delivery in deliveries { arguments += [Array(String(delivery.sequence).utf8), Self.encoded(delivery)] }
        arguments += removed.map { Array(String($0).utf8) }
        _ = try await run(Self.writeScript, arguments, "write")
    }

    public func close() async {
        handedOver.continuation.finish()
        await line.close()
    }

    public func adopted() async throws(RtmError) -> [QueuedDelivery] {
        let reply = try await call("adopt") { client throws(RedisError) in try await client.send(["LRANGE", Self.handedKey(of: nodeID), "0", "-1"]) }
        return (reply.elements ?? []).compactMap { Self.decoded(Self.bytes($0), sequence: 0) }
    }

    public func keepAdopted(_ deliveries: [QueuedDelivery]) async throws(RtmError) {
        var arguments = [Array(Self.deliveriesKey(of: nodeID).utf8), Array(Self.handedKey(of: nodeID).utf8)]
        for delivery in deliveries { arguments += [Array(String(delivery.sequence).utf8), Self.encoded(delivery)] }
        _ = try await run(Self.keepScript, arguments, "adopt")
    }

    public var adoptions: AsyncStream<Void>? { handedOver.stream }

    /// Takes over what waits in the queue of `node` (a dead node): moves it, in its order, to
    /// what is handed to this node, and tells the module. Returns how many deliveries moved; 0 when
    /// another node took them first, or the dead node had none.
    @discardableResult
    public func takeOver(queueOfNode node: String) async throws(RtmError) -> Int {
        guard node != nodeID else { return 0 }
        let reply = try await run(
            Self.takeOverScript,
            [Self.deliveriesKey(of: node), Self.handedKey(of: node), Self.handedKey(of: nodeID)].map { Array($0.utf8) },
            "take over")
        let moved = reply.integer ?? 0
        if moved > 0 { handedOver.continuation.yield() }
        return Int(moved)
    }

    /// The reaper's step: what waited in the dead node's queue is sent from here.
    public func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions {
        try await takeOver(queueOfNode: node)
        return ReapedSessions()
    }

    // MARK: Scripts

    /// ARGV: the hash, how many to add, then sequence and delivery for each, then the sequences to remove.
    static let writeScript = RedisScript(
        """
        local added = tonumber(ARGV[2])
        for i = 0, added - 1 do
          redis.call('HSET', ARGV[1], ARGV[3 + 2 * i], ARGV[4 + 2 * i])
        end
        for i = 3 + 2 * added, #ARGV do
          redis.call('HDEL', ARGV[1], ARGV[i])
        end
        return added
        """)

    /// ARGV: this node's hash and handed list, then sequence and delivery for each kept: into the
    /// hash, and as many off the front of the list.
    static let keepScript = RedisScript(
        """
        local kept = 0
        for i = 3, #ARGV, 2 do
          redis.call('HSET', ARGV[1], ARGV[i], ARGV[i + 1])
          kept = kept + 1
        end
        if kept > 0 then redis.call('LTRIM', ARGV[2], kept, -1) end
        return kept
        """)

    /// ARGV: the dead node's hash and handed list, this node's handed list. What was handed to the
    /// dead node first (it is older than anything the dead node queued after taking it), then its
    /// own deliveries by sequence; the dead node's keys go. Returns how many moved.
    static let takeOverScript = RedisScript(
        """
        local moved = 0
        for _, delivery in ipairs(redis.call('LRANGE', ARGV[2], 0, -1)) do
          redis.call('RPUSH', ARGV[3], delivery)
          moved = moved + 1
        end
        local fields = redis.call('HGETALL', ARGV[1])
        local sequences = {}
        for i = 1, #fields, 2 do sequences[#sequences + 1] = tonumber(fields[i]) end
        table.sort(sequences)
        for _, sequence in ipairs(sequences) do
          redis.call('RPUSH', ARGV[3], redis.call('HGET', ARGV[1], tostring(sequence)))
          moved = moved + 1
        end
        redis.call('DEL', ARGV[1], ARGV[2])
        return moved
        """)

    // MARK: Encoding

    /// A delivery as stored: `[eventId, target, body, created ms]` in MessagePack (the sequence is
    /// the hash field).
    static func encoded(_ delivery: QueuedDelivery) -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(4)
        writer.writeString(delivery.eventId)
        writer.writeString(delivery.target)
        writer.writeBinary(delivery.body)
        writer.writeUInt(delivery.created.millisecondsSince1970)
        return writer.bytes
    }

    /// The delivery `bytes` store, numbered `sequence`; nil when they are not one.
    static func decoded(_ bytes: [UInt8]?, sequence: Int64) -> QueuedDelivery? {
        guard let bytes else { return nil }
        var reader = MessagePackReader(bytes)
        do throws(WireError) {
            guard try reader.readArrayHeader() == 4 else { return nil }
            let eventId = try reader.readString()
            let target = try reader.readString()
            let body = try reader.readBinary()
            let created = try reader.readInteger(UInt64.self)
            guard reader.isAtEnd else { return nil }
            return QueuedDelivery(
                sequence: sequence, eventId: eventId, target: target, body: body,
                created: WallClockTime(millisecondsSince1970: created))
        } catch {
            return nil
        }
    }

    /// A bulk string's bytes.
    private static func bytes(_ value: RESPValue) -> [UInt8]? {
        if case .bulkString(let bytes) = value { bytes } else { nil }
    }

    /// A hash's fields and values: a map on a RESP3 connection, pairs in an array on RESP2.
    private static func fields(of reply: RESPValue) -> [(RESPValue, RESPValue)] {
        if case .map(let pairs) = reply { return pairs.map { ($0.key, $0.value) } }
        let flat = reply.elements ?? []
        return stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0], flat[$0 + 1]) }
    }

    // MARK: Calls

    private func run(_ script: RedisScript, _ arguments: [[UInt8]], _ operation: String) async throws(RtmError) -> RESPValue {
        try await call(operation) { client throws(RedisError) in try await client.run(script, keys: [], arguments: arguments) }
    }

    /// Calls Redis with the connected client; its failures as the storage codes a store answers with.
    private func call<T>(_ operation: String, _ body: (RedisClient) async throws(RedisError) -> T) async throws(RtmError) -> T {
        do {
            return try await body(try line.client())
        } catch {
            throw RedisMetadataStore.error(error, operation: "webhook queue \(operation)")
        }
    }
}
