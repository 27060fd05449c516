import Synchronization
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTopicRouter
import SwitchboardWire

/// Stream channels and topics for a cluster: what every node must agree on in the cluster's Redis
/// (who is in each stream channel, so the users-per-channel limit counts every node's, and who
/// publishes in which topic, so snapshots, topic events and `subscribeTopic` without a user list
/// see every node's publishers), one Lua script per atomic operation (`TopicScripts`); what only
/// concerns this node's sessions (their topics' options, their subscriptions, so whom a message
/// goes to here) in an `InMemoryTopicStore` of the node's own.
///
/// - The hot path stays off scripts: `publication` is answered from this node's memory, and
///   `relay` hands a message to the other nodes as one pipelined `PUBLISH` on the store's own
///   connection, so a publisher's messages and its topic changes leave in the order it made them.
///   Each node hears a stream channel's messages once (one subscription per node), and routes
///   them to its own subscribers from its own memory (`receivers`).
/// - The limits: users per stream channel is checked in the join's script; the others are per
///   client, so each is checked where its client's session is (the joined topics per channel in
///   the script as well, where the session's topics are).
/// - Sessions: a session id means something only on its node, so a member is `node:session`.
///   `reapSessions(ofNode:lastBeat:)` ends a dead node's memberships (its sessions leave every
///   stream channel, told to the members on other nodes), and this node's earlier run's as the
///   cluster link reaps it at start. A session whose end Redis could not take is ended there
///   before the next operation.
public final class RedisTopicStore: TopicStore, DeadNodeStep {
    /// The Redis every node shares.
    public let configuration: RedisConfiguration
    /// This node's id in the cluster.
    public let nodeID: String
    /// This node's sessions as the store records them.
    private let sessions: NodeSessions
    private let line = RedisLine()
    /// This node's sessions' memberships, topics and subscriptions.
    private let local = InMemoryTopicStore()
    /// Sessions that ended here while Redis could not take it: ended there before the next call.
    private let unfinished = Mutex<Set<SessionID>>([])
    private let notRelayed = Mutex(0)

    /// The store of node `nodeID` on the cluster's Redis of `configuration`; it connects in `open`.
    public init(configuration: RedisConfiguration, nodeID: String) {
        self.configuration = configuration
        self.nodeID = nodeID
        sessions = NodeSessions(nodeID: nodeID)
    }

    /// True while the connection to Redis is up.
    public var isConnected: Bool { line.isConnected }

    /// Topic messages this node accepted that did not reach Redis after `relay` took them (the
    /// connection dropped with them on it).
    public var messagesNotRelayed: Int { notRelayed.withLock { $0 } }

    public func open() async throws {
        try await line.open(configuration, keeping: "stream channels") {
            TopicStoreStartupError(description: $0)
        }
    }

    public func close() async { await line.close() }

    public var publishesChanges: Bool { true }

    /// The reaper's step: the dead node's sessions leave every stream channel (the members on
    /// other nodes are told of the topics they published in), unless the node came back.
    public func reapSessions(ofNode node: String, lastBeat: WallClockTime) async throws -> ReapedSessions {
        _ = try await end(KeyPart.escaped(node) + ":", reaping: true)
        // Reported by the presence store, which holds every channel membership, as each ends.
        return ReapedSessions()
    }

    public func endTakenOver(_ session: SessionID, fromNode node: String) async throws(RtmError) {
        _ = try await end(NodeSessions.id(session, ofNode: node), reaping: false)
    }

    /// Ends the memberships of the sessions whose ids start with `prefix` (`node:`), or of the
    /// one session `prefix` names; with `reaping`, only those of a node marked reaped.
    private func end(_ prefix: String, reaping: Bool) async throws(RtmError) -> Int {
        let reply = try await run(TopicScripts.end, [prefix, reaping ? "1" : "0"], "endSessions", .channelLeaveFailed)
        guard let ended = reply.integer else { throw Self.unexpected(reply, "endSessions", .channelLeaveFailed) }
        return Int(ended)
    }

    /// Writes back this node's stream-channel memberships and topic publishers that Redis no
    /// longer holds (it restarted with nothing kept), from this node's own memory; one script per
    /// hundred memberships. Returns how many memberships were written back.
    public func restore() async throws(RtmError) -> Int {
        try await WriteBack.inBatches(local.memberships) { entry in
            [tag(entry.channel), id(entry.member.session), entry.member.userId].map { Array($0.utf8) } + [WriteBack.packed(entry.topics)]
        } run: { arguments throws(RtmError) in
            let reply = try await run(TopicScripts.restore, bytes: arguments, "restore", .channelJoinFailed)
            guard let count = reply.integer else { throw Self.unexpected(reply, "restore", .channelJoinFailed) }
            return Int(count)
        }
    }

    // MARK: Channels

    public func join(_ member: StreamMember, to channel: ChannelKey, limits: Limits) async throws(RtmError) -> [TopicInfo] {
        let operation = JoinStreamChannel.operation
        try await finishEnds(operation, .channelJoinFailed)
        // The per-client limits here, the users of every node in the script.
        var perClient = limits
        perClient.streams.usersPerChannel = .max
        _ = try local.join(member, to: channel, limits: perClient)
        let reply: RESPValue
        do {
            reply = try await run(
                TopicScripts.join,
                [tag(channel), id(member.caller.session), member.caller.userId, String(limits.streams.usersPerChannel)], operation,
                .channelJoinFailed)
        } catch {
            _ = local.leave(member.caller.session, from: channel)
            throw error
        }
        guard let parts = reply.elements, let status = parts.first?.integer, status == 1, parts.count == 2,
            let topics = Self.topics(parts[1])
        else {
            _ = local.leave(member.caller.session, from: channel)
            guard reply.elements?.last?.string == "full" else { throw Self.unexpected(reply, operation, .channelJoinFailed) }
            throw RtmError(
                .channelJoinFailed, operation: operation, reason: "\(channel.name) already has \(limits.streams.usersPerChannel) users")
        }
        return topics
    }

    public func leave(_ session: SessionID, from channel: ChannelKey) async throws(RtmError) -> StreamDeparture? {
        let operation = LeaveStreamChannel.operation
        try await finishEnds(operation, .channelLeaveFailed)
        guard local.isMember(session, of: channel) else { return nil }
        _ = try await run(TopicScripts.leave, [tag(channel), id(session)], operation, .channelLeaveFailed)
        return local.leave(session, from: channel)
    }

    /// Leaves here whatever Redis answers: a session that ended is gone from this node; when Redis
    /// cannot take it now, it is ended there before the next operation.
    public func leaveAll(_ session: SessionID) async throws(RtmError) -> [StreamDeparture] {
        let departures = local.leaveAll(session)
        guard !departures.isEmpty else { return [] }
        do {
            _ = try await end(id(session), reaping: false)
        } catch {
            unfinished.withLock { _ = $0.insert(session) }
        }
        return departures
    }

    public func topics(of channel: ChannelKey) async throws(RtmError) -> [TopicInfo] {
        try await snapshot(of: channel).topics
    }

    public func snapshot(of channel: ChannelKey) async throws(RtmError) -> TopicSnapshot {
        let operation = JoinStreamChannel.operation
        try await finishEnds(operation, .channelJoinFailed)
        let reply = try await run(TopicScripts.snapshot, [tag(channel)], operation, .channelJoinFailed)
        guard let parts = reply.elements, parts.count == 2, let sequence = parts[0].integer, let topics = Self.topics(parts[1]) else {
            throw Self.unexpected(reply, operation, .channelJoinFailed)
        }
        return TopicSnapshot(topics: topics, sequence: UInt64(max(0, sequence)))
    }

    // MARK: Publishers

    public func joinTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, options: TopicJoinOptions, limits: Limits,
        operation: String
    ) async throws(RtmError) -> TopicPublisher {
        try await finishEnds(operation, .channelJoinTopicFailed)
        let publisher = try local.joinTopic(session, topic, in: channel, options: options, limits: limits, operation: operation)
        do {
            let reply = try await run(
                TopicScripts.joinTopic,
                [tag(channel), id(session), topic, options.meta, String(limits.streams.joinedTopicsPerChannel)], operation,
                .channelJoinTopicFailed)
            try refusal(reply, topic: topic, in: channel, operation, .channelJoinTopicFailed, limits: limits)
        } catch {
            _ = try? local.leaveTopic(session, topic, in: channel, operation: operation)
            throw error
        }
        return publisher
    }

    public func leaveTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, operation: String
    ) async throws(RtmError) -> TopicPublisher {
        try await finishEnds(operation, .channelLeaveFailed)
        _ = try local.publication(of: session, in: topic, of: channel, operation: operation)
        let reply = try await run(TopicScripts.leaveTopic, [tag(channel), id(session), topic], operation, .channelLeaveFailed)
        try refusal(reply, topic: topic, in: channel, operation, .channelLeaveFailed, limits: Limits())
        return try local.leaveTopic(session, topic, in: channel, operation: operation)
    }

    public func publication(
        of session: SessionID, in topic: String, of channel: ChannelKey, operation: String
    ) throws(RtmError) -> (TopicPublication, receivers: [SessionID]) {
        try local.publication(of: session, in: topic, of: channel, operation: operation)
    }

    // MARK: Subscriptions

    public func subscribe(
        _ session: SessionID, to users: [UserID]?, in topic: String, of channel: ChannelKey, limits: Limits,
        operation: String
    ) async throws(RtmError) -> TopicSubscription {
        var publishers: [UserID]?
        if users == nil, local.isMember(session, of: channel) {
            let reply = try await run(TopicScripts.publishers, [tag(channel), topic], operation, .channelSubscribeFailed)
            guard let names = reply.elements?.compactMap(\.string) else { throw Self.unexpected(reply, operation, .channelSubscribeFailed) }
            publishers = names
        }
        return try local.subscribe(session, to: users, in: topic, of: channel, limits: limits, operation: operation, publishers: publishers)
    }

    public func unsubscribe(
        _ session: SessionID, from users: [UserID]?, in topic: String, of channel: ChannelKey, operation: String
    ) throws(RtmError) {
        try local.unsubscribe(session, from: users, in: topic, of: channel, operation: operation)
    }

    public func receivers(of publisher: UserID, in topic: String, of channel: ChannelKey) -> [SessionID] {
        local.receivers(of: publisher, in: topic, of: channel)
    }

    // MARK: Messages and changes

    /// Publishes `message` on its channel's `…:events` (`[2, tag, node, …DeliveryFields, priority]`),
    /// behind what this node sent before, without waiting.
    public func relay(_ message: TopicMessage) throws(RtmError) {
        let operation = PublishTopicMessage.operation
        guard line.isConnected, let client = try? line.client() else {
            throw RtmError(
                .channelPublishMessageFailed, operation: operation,
                reason: "the cluster's Redis cannot be reached, so the other nodes' subscribers cannot have it")
        }
        let delivery = message.delivery
        var writer = MessagePackWriter(reservingCapacity: 96 + delivery.approximateSize)
        writer.writeArrayHeader(9)
        writer.writeInteger(2)
        writer.writeString(tag(message.channel))
        writer.writeString(sessions.node)
        DeliveryFields.write(delivery, into: &writer)
        writer.writeInteger(message.priority.rawValue)
        client.send(bytes: [Self.publish, TopicKeys(message.channel).events.name, writer.bytes]) { [self] result in
            if case .failure = result { notRelayed.withLock { $0 += 1 } }
        }
    }

    /// A change (`[1, …]`, `TopicScripts`) or a message (`[2, …]`, `relay`) as published.
    public func news(publishedAs payload: [UInt8]) -> TopicNews? {
        var reader = MessagePackReader(payload)
        do {
            let count = try reader.readArrayHeader()
            let kind = try reader.readInteger(Int.self)
            guard let channel = TopicKeys.channel(ofTag: Substring(try reader.readString())) else { return nil }
            switch (kind, count) {
            case (1, 7):
                let sequence = try reader.readInteger(UInt64.self)
                guard let type = RtmTopicEventType(rawValue: try reader.readInteger(Int.self)) else { return nil }
                let maker = try reader.readString()
                let user = try reader.readString()
                var flat: [String] = []
                for _ in 0..<(try reader.readArrayHeader()) { flat.append(try reader.readString()) }
                guard reader.isAtEnd, flat.count % 2 == 0 else { return nil }
                let topics = stride(from: 0, to: flat.count, by: 2).map {
                    TopicInfo(topic: flat[$0], publishers: [TopicPublisher(userId: user, meta: flat[$0 + 1])])
                }
                return .change(
                    PublishedTopicChange(
                        channel: channel, sequence: sequence, type: type, publisher: user, topics: topics,
                        except: sessions.session(of: maker)))
            case (2, 9):
                let origin = try reader.readString()
                guard origin != sessions.node else { return .echo }
                let delivery = try DeliveryFields.read(from: &reader, channelType: .stream, channelName: channel.name)
                guard let priority = RtmMessagePriority(rawValue: try reader.readInteger(Int.self)), reader.isAtEnd else { return nil }
                return .message(TopicMessage(channel: channel, delivery: delivery, priority: priority))
            default:
                return nil
            }
        } catch {
            return nil
        }
    }

    // MARK: Steps

    private func tag(_ channel: ChannelKey) -> String { TopicKeys(channel).tag }

    /// `node:session`: a session as the store records it.
    private func id(_ session: SessionID) -> String { sessions.id(session) }

    /// Ends in Redis the sessions whose end it could not take before; throws `code` while it cannot.
    private func finishEnds(_ operation: String, _ code: RtmErrorCode) async throws(RtmError) {
        guard let pending = unfinished.withLock({ $0.isEmpty ? nil : $0 }) else { return }
        for session in pending.sorted() {
            _ = try await run(TopicScripts.end, [id(session), "0"], operation, code)
            unfinished.withLock { _ = $0.remove(session) }
        }
    }

    /// Throws the script's refusal (`{0, reason}`) as the in-memory store words it.
    private func refusal(
        _ reply: RESPValue, topic: String, in channel: ChannelKey, _ operation: String, _ code: RtmErrorCode, limits: Limits
    ) throws(RtmError) {
        guard let parts = reply.elements, let status = parts.first?.integer else { throw Self.unexpected(reply, operation, code) }
        guard status != 1 else { return }
        switch parts.last?.string {
        case "notMember":
            throw RtmError(.channelNotJoined, operation: operation, reason: "stream channel \(channel.name) is not joined")
        case "notJoined":
            throw RtmError(.channelTopicNotJoined, operation: operation, reason: "topic \(topic) is not joined")
        case "duplicate":
            throw RtmError(.duplicateOperation, operation: operation, reason: "already joined topic \(topic)")
        case "full":
            throw RtmError(
                .channelJoinTopicFailed, operation: operation,
                reason: "already joined \(limits.streams.joinedTopicsPerChannel) topics in \(channel.name)")
        default:
            throw Self.unexpected(reply, operation, code)
        }
    }

    /// Publishers sent as topic, user, meta, number, …: the topics by name, each one's
    /// publishers in join order.
    private static func topics(_ value: RESPValue) -> [TopicInfo]? {
        guard let flat = value.elements, flat.count % 4 == 0 else { return nil }
        var byTopic: [String: [(UInt64, TopicPublisher)]] = [:]
        for at in stride(from: 0, to: flat.count, by: 4) {
            guard let topic = flat[at].string, let user = flat[at + 1].string, let meta = flat[at + 2].string,
                let number = flat[at + 3].integer
            else { return nil }
            byTopic[topic, default: []].append((UInt64(max(0, number)), TopicPublisher(userId: user, meta: meta)))
        }
        return byTopic.sorted { $0.key < $1.key }.map { topic, publishers in
            TopicInfo(topic: topic, publishers: publishers.sorted { $0.0 < $1.0 }.map(\.1))
        }
    }

    private func run(_ script: RedisScript, _ arguments: [String], _ operation: String, _ code: RtmErrorCode) async throws(RtmError)
        -> RESPValue
    {
        try await run(script, bytes: arguments.map { Array($0.utf8) }, operation, code)
    }

    private func run(_ script: RedisScript, bytes arguments: [[UInt8]], _ operation: String, _ code: RtmErrorCode) async throws(RtmError)
        -> RESPValue
    {
        do {
            return try await line.client().run(script, keys: [], arguments: arguments)
        } catch {
            switch error {
            case .timedOut, .connectionLost:
                throw RtmError(
                    code, operation: operation,
                    reason: "the cluster's Redis did not answer; it may or may not have been carried out: \(error)")
            default:
                throw RtmError(code, operation: operation, reason: "the cluster's Redis cannot take it: \(error)")
            }
        }
    }

    private static func unexpected(_ reply: RESPValue, _ operation: String, _ code: RtmErrorCode) -> RtmError {
        RtmError(code, operation: operation, reason: "an unexpected reply from Redis: \(reply)")
    }

    private static let publish = Array("PUBLISH".utf8)
}

/// The Redis topic store could not start; the message names the Redis and what failed.
public struct TopicStoreStartupError: Error, CustomStringConvertible {
    public let description: String
}
