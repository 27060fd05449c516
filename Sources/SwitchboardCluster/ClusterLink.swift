import Synchronization
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTransport

/// The link between this node and the others of its cluster, over Redis pub/sub.
///
/// It is the relay the modules ask for on the bus (`RelayMessages.swift`), and the only part of
/// the server that knows other nodes exist:
/// - a message accepted here (`MessagePublished` of a message channel) is published to the
///   channel's Redis channel, in the order the bus saw them, over one pipelined connection;
/// - `OpenRelay` subscribes this node to a channel's or a user's Redis channel before the
///   subscribe or login that asked is answered; once the node's last subscriber of the channel,
///   or the user's last session here, is gone, the link unsubscribes;
/// - `ForwardUserMessage` publishes to the user's Redis channel and answers whether a node took
///   it (Redis counts the nodes subscribed);
/// - `OpenMetadataRelay` subscribes this node to a metadata set's changes, which the Redis
///   metadata store publishes as it commits them, before the storage module reads the set for a
///   new listener; the link unsubscribes once no member of the channel here has the metadata
///   feature, or no session here subscribes to the user's metadata;
/// - `OpenLockRelay` subscribes this node to the changes of a channel's locks, which the Redis
///   lock store publishes as it makes them, before the lock module takes a snapshot for a member
///   or lets a session wait in a line; the link unsubscribes once the node has no member of the
///   channel;
/// - `OpenPresenceRelay` subscribes this node to the changes of a channel's presence, which the
///   Redis presence store publishes as it makes them, before the presence module takes a snapshot
///   for a member that asked for presence events; the link unsubscribes once no member of the
///   channel here asks for them;
/// - `OpenTopicRelay` subscribes this node to a stream channel's topic changes and topic messages,
///   which the Redis topic store publishes, before the topic router takes a joiner's snapshot; the
///   link unsubscribes once the node has no member of the channel;
/// - what other nodes publish is delivered to this node's listeners (`InboundRelay`);
/// - every beat it writes this node's liveness record and status, and `ListClusterNodes` reads
///   every live node's (`NodeDirectory`);
/// - every beat it looks for nodes whose record expired and, holding the reapers' lease, ends
///   their sessions' share of every store that asked (`reap(with:)`, `DeadNodes`) and takes them
///   off the users' online sets; a beat that finds this node itself reaped (it was paused or cut
///   off meanwhile) ends this node's sessions before the node beats again;
/// - it records which node holds each session (`SessionDirectory`, written with each login's
///   claim), so that `AdoptSession` can take a session over on another node when its client
///   reconnects there, and `AnnounceTakeOver` tells the former node to end its copy.
///
/// With one subscription per node per channel, user or set, each message reaches each node once.
public actor ClusterLink: OpeningModule {
    public nonisolated let name = "cluster-link"
    /// How this node joined the cluster.
    public nonisolated let configuration: ClusterConfiguration
    /// The connections to Redis, from `open()` on.
    private nonisolated let redis = RedisConnections()
    private nonisolated let inbound: InboundRelay
    /// Which sessions of this node are in which channels.
    private let membership = ChannelMembership()
    /// Which users have sessions on this node.
    private var users = UserSessions()
    /// Which sessions of this node subscribe to which users' metadata.
    private var userMetadataSubscribers: [UserKey: Set<SessionID>] = [:]
    /// What this node is subscribed to on Redis.
    private var listening: Set<Listened> = []
    /// The injected clock, from `start` on.
    private var clock: (any SwitchboardClock)?
    /// The bus, from `start` on: each beat asks it for this node's status.
    private var bus: EventBus?
    /// The limits in force per app, from `start` on: a user's first login anywhere checks the
    /// app's concurrent users across the cluster.
    private var limits: LimitsBook?
    /// Why the last session here of each user ended, until the node is off the user's online set:
    /// the reason a `UserOnlineAcrossNodes` gives when it was the last node.
    private var endReasons: [UserKey: SessionEndReason] = [:]
    /// What this node's app hash in Redis holds, so a beat writes only what changed.
    private var appLoads = AppLoadPublication()
    /// Opening and closing one at a time: a close still waiting for Redis must not unsubscribe
    /// after an open that came later has subscribed again.
    private let turns = OneAtATime()
    /// The users' online sets, with this node's index of them.
    private nonisolated var onlineSets: OnlineSets { OnlineSets(redis: redis) }
    /// Which node holds each session.
    private nonisolated var sessionDirectory: SessionDirectory { SessionDirectory(redis: redis, nodeID: configuration.nodeID) }
    /// The first number of this node run's block of session numbers, from `open()` on.
    private nonisolated let sessionNumbers = Mutex<UInt64?>(nil)
    /// This node's sessions as the directory records them (from their claim or take-over to their
    /// end), to write back when Redis comes back having lost them.
    private nonisolated let directoryShare = Mutex<[SessionID: SessionDirectory.Entry]>([:])
    /// What else ends a dead node's sessions' share when this node reaps it (the stores').
    private nonisolated let deadNodeSteps = Mutex<[any DeadNodeStep]>([])
    /// The reaping pass under way, if any: beats go on meanwhile.
    private var reaping: Task<Void, Never>?
    /// Whether a reaping pass is under way (a beat starts one when none is).
    public var reapingUnderWay: Bool { reaping != nil }
    /// The beats carried out since the start, whatever their outcome: a clock driven by hand
    /// (tests) waits for the beat of each step it moves.
    public private(set) var beatsCompleted = 0
    /// This node's beats in a row that wrote its record. A node reaps only after more than a
    /// record's life of them: after an outage of Redis itself (every record expired meanwhile),
    /// every node that came back with Redis has written its record again by then.
    private var steadyBeats = 0

    /// A link for this node of the cluster `configuration` names; it connects in `open()`.
    public init(_ configuration: ClusterConfiguration) {
        self.configuration = configuration
        inbound = InboundRelay(nodeID: configuration.nodeID)
    }

    /// Adds `steps` to what ends a dead node's sessions' share when this node reaps it (the
    /// stores in the cluster's Redis that keep state per session); the users' online sets are
    /// the link's own step, always taken.
    public nonisolated func reap(with steps: [any DeadNodeStep]) {
        deadNodeSteps.withLock { $0 += steps }
    }

    /// True while both connections to Redis are up.
    public nonisolated var isConnected: Bool { redis.isConnected }

    /// What has come in from the other nodes so far.
    public nonisolated var received: RelayCounters { inbound.seen }

    /// How many nodes of the cluster were alive at this node's last beat (itself included).
    public nonisolated var liveNodes: Int { inbound.health.liveNodes }

    /// How long the last beat's round trip to Redis took; nil before the first.
    public nonisolated var redisRoundTrip: Duration? { inbound.health.roundTrip }

    /// Whether one of this node's probes came back through Redis pub/sub within the
    /// configuration's `probeWindow` before `now` (the injected clock's): messages from other
    /// nodes reach it.
    public nonisolated func pubSubProven(now: Duration) -> Bool {
        inbound.health.pubSubProven(within: configuration.probeWindow, now: now)
    }

    public func start(_ context: ModuleContext) async {
        clock = context.clock
        bus = context.bus
        limits = context.limitsBook
        inbound.attach(context) { [weak self] in
            guard let self else { return }
            Task { await self.listUsersAgain() }
        }
        let bus = context.bus
        let redis = self.redis
        let origin = configuration.nodeID
        let inbound = self.inbound
        bus.subscription()
            .keepingMembership(membership) { [self] update in await membershipChanged(update) }
            .on(SessionOpened.self) { [self] event in await sessionOpened(event) }
            .on(MessagePublished.self) { event in
                guard event.channel.type == .message else { return }
                let target = RelayTarget.channel(event.channel)
                let envelope = RelayEnvelope(origin: origin, target: target, delivery: event.delivery)
                redis.publish(envelope.encoded(), to: RelayChannels.channel(of: target)) { error in
                    // Counted here and logged once a beat: an outage must not flood the log.
                    inbound.notRelayed(error)
                }
            }
            .on(UserMetadataSubscriptionChanged.self) { [self] event in await userMetadataSubscriptionChanged(event) }
            .answer(OpenRelay.self) { [self] request throws(RtmError) in
                try await open(.messages(request.target), operation: OpenRelay.operation)
            }
            .answer(OpenMetadataRelay.self) { [self] request throws(RtmError) in
                try await open(.metadata(request.target), operation: OpenMetadataRelay.operation)
            }
            .answer(OpenLockRelay.self) { [self] request throws(RtmError) in
                try await open(.locks(request.channel), operation: OpenLockRelay.operation)
            }
            .answer(OpenPresenceRelay.self) { [self] request throws(RtmError) in
                try await open(.presence(request.channel), operation: OpenPresenceRelay.operation)
            }
            .answer(OpenTopicRelay.self) { [self] request throws(RtmError) in
                try await open(.topics(request.channel), operation: OpenTopicRelay.operation)
            }
            .answer(CloseRelay.self) { [self] request in
                // Settled: the leaves and ends published before are applied, and closed what they emptied.
                await closeIfUnheard(.messages(request.target))
                return Done()
            }
        bus.handle(ClaimUser.self) { [self] request throws(RtmError) in
            // Kept from before the claim: the session's end, which may come while it runs, forgets it.
            let session = request.caller.session
            if let secret = request.secret {
                let entry = SessionDirectory.Entry(user: request.caller.user, secret: secret, presenceTimeout: request.presenceTimeout)
                directoryShare.withLock { $0[session] = entry }
            }
            do throws(RtmError) {
                return try await claim(
                    request.caller, record: request.secret.map { ($0, request.presenceTimeout) }, movedFrom: nil, operation: ClaimUser.operation)
            } catch {
                directoryShare.withLock { $0[session] = nil }
                throw error
            }
        }
        bus.handle(ReserveSessionNumbers.self) { [self] _ throws(RtmError) in try await reserveSessionNumbers() }
        bus.handle(AdoptSession.self) { [self] request throws(RtmError) in
            do {
                let former = try await sessionDirectory.adopt(request.ticket, of: request.user, presenceTimeout: request.presenceTimeout)
                if former != nil {
                    let entry = SessionDirectory.Entry(user: request.user, secret: request.ticket.secret, presenceTimeout: request.presenceTimeout)
                    directoryShare.withLock { $0[request.ticket.session] = entry }
                }
                return former
            } catch {
                throw RtmError(.loginTimeout, operation: AdoptSession.operation, reason: "the cluster's Redis cannot be reached: \(error)")
            }
        }
        bus.handle(AnnounceTakeOver.self) { [self] request throws(RtmError) in
            try await claim(request.caller, record: nil, movedFrom: request.formerNode, operation: AnnounceTakeOver.operation)
        }
        bus.handle(CountUsersAcrossNodes.self) { [self] request throws(RtmError) in
            do {
                return try await onlineSets.users(of: request.app)
            } catch {
                throw RtmError(.notConnected, operation: CountUsersAcrossNodes.operation, reason: "the cluster's Redis cannot be read: \(error)")
            }
        }
        bus.handle(CommandUserAcrossNodes.self) { [self] request throws(RtmError) in try await command(request, bus) }
        inbound.onCommand { announcement in
            Task { () async -> Void in
                let answer: UserCommandAnswer
                do throws(RtmError) {
                    let user = announcement.user
                    let sessions = try await announcement.command.carryOut(
                        on: bus, caller: .server(app: user.app, userId: user.userId), userId: user.userId)
                    answer = UserCommandAnswer(id: announcement.id, sessions: sessions, refusal: nil)
                } catch {
                    answer = UserCommandAnswer(id: announcement.id, sessions: 0, refusal: error)
                }
                redis.publish(answer.encoded(), to: NodeHealth.channel(of: announcement.origin)) { error in
                    inbound.log(.warning, "the answer to a command of node \(announcement.origin) did not reach Redis: \(error)")
                }
            }
        }
        bus.handle(ListClusterNodes.self) { [clock = context.clock] request throws(RtmError) in
            do {
                let reply = try await redis.run(
                    NodeDirectory.list, keys: [NodeDirectory.nodesKey], arguments: NodeDirectory.listArguments(now: clock.wallNow, app: request.app))
                return NodeDirectory.liveNodes(from: reply, app: request.app)
            } catch {
                throw RtmError(.notConnected, operation: ListClusterNodes.operation, reason: "the cluster's Redis cannot be read: \(error)")
            }
        }
        // Started on the publisher's thread, not awaited: the script is queued behind every
        // forward before it on the one command connection, so a publisher's messages to a user
        // reach Redis, and the user's nodes, in the order they were published, and the answer
        // is given when Redis's reply comes.
        bus.handleStarting(ForwardUserMessage.self) { request, reply in
            let target = RelayTarget.user(request.receiver)
            let envelope = RelayEnvelope(origin: origin, target: target, delivery: request.delivery)
            redis.run(
                Self.forwardToUser, keys: [RelayChannels.onlineKey(of: request.receiver)],
                arguments: [RelayChannels.channel(of: target).name, envelope.encoded()]
            ) { result in
                switch result {
                case .success(let answer): reply(.success((answer.integer ?? 0) > 0))
                case .failure(let error):
                    reply(.failure(RtmError(
                        .channelPublishMessageTimeout, operation: ForwardUserMessage.operation,
                        reason: "the cluster's Redis did not take the message: \(error)")))
                }
            }
        }
    }

    /// Publishes a user's message (ARGV[2]) to their channel (ARGV[1]) when some node lists them
    /// online (KEYS[1]); returns how many nodes got it, 0 when none lists them.
    private static let forwardToUser = RedisScript(
        """
        if redis.call('SCARD', KEYS[1]) == 0 then return 0 end
        return redis.call('PUBLISH', ARGV[1], ARGV[2])
        """)

    /// Makes `caller` its user's newest login: takes the user's next generation and announces it
    /// on the user's channel, where every node with a session of the user hears it (`UserClaims`).
    /// With `record` (its secret and presence timeout), a new session: recorded as this node's in
    /// the same script (`SessionDirectory`). With `movedFrom`, a session taken over from that
    /// node: announced as moved first, on the same channel, so the former node ends its copy as
    /// moved rather than replaced.
    private nonisolated func claim(
        _ caller: Caller, record: (secret: String, presenceTimeout: Int)?, movedFrom former: String?, operation: String
    ) async throws(RtmError) -> Done {
        let user = caller.user
        inbound.claims.withLock { $0.begin(user) }
        var failure: RedisError?
        var generation: Int64?
        let node = Array(configuration.nodeID.utf8)
        do {
            let reply = try await redis.run(
                Self.claimUser,
                keys: [RelayChannels.generationKey(of: user), SessionDirectory.key(of: user), SessionDirectory.indexKey(of: configuration.nodeID)],
                arguments: [
                    RelayChannels.channel(of: .user(user)).name, node, Array(user.app.utf8), Array(user.userId.utf8),
                    Array(String(caller.session.rawValue).utf8), Array((record?.secret ?? "").utf8),
                    former.map { MovedSessionAnnouncement(former: $0, caller: caller, taker: configuration.nodeID).encoded() } ?? [],
                    Array(String(record?.presenceTimeout ?? 0).utf8),
                ])
            generation = reply.integer
        } catch {
            failure = error
        }
        if let replaced = inbound.claims.withLock({ $0.finish(caller, generation: generation) }) { inbound.endReplaced(replaced) }
        guard generation != nil else {
            throw RtmError(
                .loginTimeout, operation: operation,
                reason: "the cluster's Redis cannot be reached: \(failure.map { "\($0)" } ?? "no generation in its answer")")
        }
        return Done()
    }

    /// Carries `request`'s command out on the user's sessions on every node: published on the
    /// user's channel (only when some node lists the user online), where the nodes holding the
    /// user hear it, carry it out and answer on this node's channel; waits for as many answers as
    /// Redis counted receivers, for at most `commandWait`. A user online on no node is this
    /// node's to answer, as on one node (a bad name is refused there as it would be).
    private nonisolated func command(_ request: CommandUserAcrossNodes, _ bus: EventBus) async throws(RtmError) -> UserCommandTally {
        let user = UserKey(request.caller.app, request.userId)
        let waits = inbound.commandWaits
        let (id, answers) = waits.expect(from: configuration.nodeID)
        let announcement = UserCommandAnnouncement(origin: configuration.nodeID, id: id, user: user, command: request.command)
        let nodes: Int
        do {
            let reply = try await redis.run(
                Self.forwardToUser, keys: [RelayChannels.onlineKey(of: user)],
                arguments: [RelayChannels.channel(of: .user(user)).name, announcement.encoded()])
            nodes = Int(reply.integer ?? 0)
        } catch {
            waits.forget(id)
            throw RtmError(.notConnected, operation: CommandUserAcrossNodes.operation, reason: "the cluster's Redis cannot be reached: \(error)")
        }
        guard nodes > 0 else {
            waits.forget(id)
            return UserCommandTally(sessions: try await request.command.carryOut(on: bus, caller: request.caller, userId: request.userId))
        }
        let gathered = await waits.gather(id, answers, count: nodes, within: configuration.commandWait)
        let sessions = gathered.reduce(0) { $0 + $1.sessions }
        // No node acted: what one of them refused is the answer, as one node's would be.
        if sessions == 0, let refusal = gathered.lazy.compactMap(\.refusal).first { throw refusal }
        return UserCommandTally(sessions: sessions, unanswered: max(0, nodes - gathered.count))
    }

    /// Takes the next generation of a user (KEYS[1]) and announces it on the user's channel
    /// (ARGV[1]) for node ARGV[2], app ARGV[3], user ARGV[4]; returns the generation. With a
    /// secret (ARGV[6]), records session ARGV[5] as the node's, with its presence timeout
    /// (ARGV[8]), in the user's sessions (KEYS[2]) and the node's index (KEYS[3]); with a
    /// moved-session announcement (ARGV[7]), publishes it first.
    ///
    /// A generation is Redis's clock in microseconds, or one more than the user's last when that
    /// is not smaller: it grows across a restart of Redis that kept nothing (the last one is kept
    /// a day, only to order logins within one microsecond).
    private static let claimUser = RedisScript(
        """
        if ARGV[6] ~= '' then
          redis.call('HSET', KEYS[2], ARGV[5], ARGV[2] .. '\\n' .. ARGV[6] .. '\\n' .. ARGV[8])
          redis.call('SADD', KEYS[3], KEYS[2] .. '\\n' .. ARGV[5])
        end
        if ARGV[7] ~= '' then redis.call('PUBLISH', ARGV[1], ARGV[7]) end
        local now = redis.call('TIME')
        local generation = tonumber(now[1]) * 1000000 + tonumber(now[2])
        local last = tonumber(redis.call('GET', KEYS[1]) or '0')
        if generation <= last then generation = last + 1 end
        redis.call('SET', KEYS[1], string.format('%d', generation), 'PX', 86400000)
        redis.call('PUBLISH', ARGV[1], cmsgpack.pack({'claim', ARGV[2], ARGV[3], ARGV[4], generation}))
        return generation
        """)

    /// The first number of this node run's block of session numbers (taken in `open()`, or now).
    private nonisolated func reserveSessionNumbers() async throws(RtmError) -> UInt64 {
        if let base = sessionNumbers.withLock({ $0 }) { return base }
        do {
            let base = try await sessionDirectory.reserveNumbers()
            return sessionNumbers.withLock { numbers in
                if numbers == nil { numbers = base }
                return numbers ?? base
            }
        } catch {
            throw RtmError(.loginTimeout, operation: ReserveSessionNumbers.operation, reason: "the cluster's Redis cannot be reached: \(error)")
        }
    }

    /// Connects to the cluster's Redis; throws when it cannot be reached now (the server does not
    /// start).
    public func open() async throws {
        let inbound = self.inbound
        try await redis.connect(configuration.redis) { inbound.handle($0) }
        try await redis.subscribe(inbound.health.channel)
        try await reapEarlierRun()
        try await rejoin(now: clock?.wallNow)
        let base = try await sessionDirectory.reserveNumbers()
        sessionNumbers.withLock { $0 = base }
    }

    /// Reaps this node's earlier run, killed before any node reaped it (its record is still
    /// listed), as another node would: marked reaped, its sessions' share of every store ended
    /// as a dead node's is, so each session waits for its client to resume it (on this node or
    /// another) until its presence timeout from the run's last beat, and ends then. An earlier run
    /// reaped already waits so. `rejoin` then clears the mark. Called by `open`, after the stores
    /// opened (`serve` opens the link last).
    private func reapEarlierRun() async throws {
        let node = configuration.nodeID
        let listed = try await redis.send([Array("ZSCORE".utf8), NodeDirectory.nodesKey, Array(node.utf8)])
        // RESP3 answers a score as a double, RESP2 as its text.
        let score: Double? = if case .double(let value) = listed { value } else { listed.string.flatMap(Double.init) }
        guard let expiry = score else { return }
        _ = try await redis.send([Array("ZADD".utf8), Array(DeadNodes.reapedKey.utf8), Array(String(Int64(expiry)).utf8), Array(KeyPart.escaped(node).utf8)])
        let lastBeat = WallClockTime(millisecondsSince1970: UInt64(max(0, expiry))) - configuration.beatInterval * configuration.beatsToLive
        let steps = deadNodeSteps.withLock { $0 } + [onlineSets, sessionDirectory]
        for step in steps { report(try await step.reapSessions(ofNode: node, lastBeat: lastBeat), ofNode: node) }
        inbound.log(.warning, "this node's earlier run was not reaped: its sessions wait for a resume until their presence timeout")
    }

    /// Clears this node's reaped mark and, knowing the time (started), writes its liveness record
    /// (`NodeDirectory.rejoin`).
    private func rejoin(now: WallClockTime?) async throws(RedisError) {
        let expires = now.map { $0 + configuration.beatInterval * configuration.beatsToLive }
        _ = try await redis.run(
            NodeDirectory.rejoin, keys: [NodeDirectory.nodesKey, Array(DeadNodes.reapedKey.utf8)],
            arguments: [Array(configuration.nodeID.utf8), Array((expires.map { String($0.millisecondsSince1970) } ?? "").utf8)])
    }

    /// Beats until cancelled: a probe through pub/sub and the liveness record each
    /// `beatInterval`; then closes the connections.
    public func run() async throws {
        if let clock = clock {
            for await _ in clock.ticks(every: configuration.beatInterval) {
                await beat(clock)
                if reaping == nil, steadyBeats > configuration.beatsToLive {
                    reaping = Task { await reapDeadNodes(now: clock.wallNow) }
                }
                // Counted once the pass it may start is under way (`reapingUnderWay`).
                beatsCompleted += 1
            }
        } else {
            await Cancellation.wait()
        }
        if let reaping {
            reaping.cancel()
            await reaping.value
        }
        await redis.close()
        inbound.finish()
    }

    /// One beat: the probe (pipelined, its arrival noted by the subscriber), then the liveness
    /// record with this node's status (`CurrentNodeStatus`, when something on the bus answers it)
    /// in one script.
    private func beat(_ clock: any SwitchboardClock) async {
        if let (count, error) = inbound.takeNotRelayed() {
            inbound.log(.warning, "\(count) messages accepted here did not reach the other nodes since the last beat: \(error)")
        }
        let health = inbound.health
        redis.publish(health.nextProbe(), to: health.channel) { _ in }
        var status: NodeStatus?
        if let bus, bus.hasHandler(CurrentNodeStatus.self) {
            status = try? await bus.request(CurrentNodeStatus())
            status?.nodeID = configuration.nodeID
        }
        let apps = status?.apps ?? [:]
        let changes = appLoads.changes(to: apps)
        let now = clock.wallNow
        let timeToLive = configuration.beatInterval * configuration.beatsToLive
        let node = configuration.nodeID
        do {
            let sent = ContinuousClock.now
            let reply = try await redis.run(
                NodeDirectory.beat, keys: NodeDirectory.beatKeys(of: node),
                arguments: NodeDirectory.beatArguments(
                    node: node, expires: now + timeToLive, now: now, timeToLive: timeToLive, status: status, changes: changes))
            health.roundTrip = ContinuousClock.now - sent
            let outcome = NodeDirectory.beatOutcome(reply)
            guard let liveNodes = outcome.liveNodes else {
                appLoads.failed()
                steadyBeats = 0
                await endReapedSessions(clock)
                return
            }
            steadyBeats += 1
            health.liveNodes = liveNodes
            if status != nil { appLoads.wrote(changes, toward: apps, hashWasThere: outcome.hashWasThere) }
        } catch {
            appLoads.failed()
            steadyBeats = 0
            inbound.log(.warning, "this node's liveness record was not written: \(error)")
        }
    }

    // MARK: Dead nodes

    /// One reaping pass: takes the lease if a node's record expired before `now`, marks the dead
    /// nodes reaped, ends their sessions' share of every step (a step that fails leaves the node
    /// to the next pass: every step is repeatable), then takes them off the records.
    private func reapDeadNodes(now: WallClockTime) async {
        defer { reaping = nil }
        let me = Array(configuration.nodeID.utf8)
        let dead: [(node: String, expiry: WallClockTime)]
        do {
            dead = DeadNodes.claimed(
                try await redis.run(
                    DeadNodes.claim, keys: [NodeDirectory.nodesKey, Array(DeadNodes.reapedKey.utf8), DeadNodes.leaseKey],
                    arguments: DeadNodes.claimArguments(node: configuration.nodeID, now: now)))
        } catch {
            return
        }
        let steps = deadNodeSteps.withLock { $0 } + [onlineSets, sessionDirectory]
        await endDueOrphans(now: now, steps: steps)
        guard !dead.isEmpty else { return }
        let timeToLive = configuration.beatInterval * configuration.beatsToLive
        for (node, expiry) in dead where node != configuration.nodeID {
            do {
                // Each step's report is published as it comes: a step runs again after a failure
                // but reports nothing the second time.
                for step in steps { report(try await step.reapSessions(ofNode: node, lastBeat: expiry - timeToLive), ofNode: node) }
                _ = try await redis.run(
                    DeadNodes.finish, keys: [NodeDirectory.nodesKey], arguments: [Array(node.utf8), Array(String(now.millisecondsSince1970).utf8)])
                inbound.log(.warning, "node \(node) was reaped: its liveness record expired at \(expiry); its sessions wait for a take-over until their presence timeout")
            } catch {
                inbound.log(.warning, "node \(node) is not reaped yet (the next pass tries again): \(error)")
            }
        }
        _ = try? await redis.run(DeadNodes.release, keys: [DeadNodes.leaseKey], arguments: [me])
    }

    /// Ends the sessions of dead nodes whose wait for a take-over ran out by `now` (each taken
    /// off the orphans by one script, so one node ends each), then what is left of a dead node
    /// after its last session's wait. A step that fails is logged: what it left stays until the
    /// node's leftovers are ended.
    private func endDueOrphans(now: WallClockTime, steps: [any DeadNodeStep]) async {
        let due: [SessionDirectory.Due]
        do {
            due = try await sessionDirectory.takeDue(now: now)
        } catch {
            return
        }
        for orphan in due {
            do {
                switch orphan {
                case .session(let session, let node):
                    for step in steps { report(try await step.endOrphan(session, ofNode: node), ofNode: node) }
                case .leftovers(let node):
                    for step in steps { report(try await step.endLeftovers(ofNode: node), ofNode: node) }
                }
            } catch {
                inbound.log(.warning, "\(orphan) of a dead node is not ended yet: \(error)")
            }
        }
    }

    /// Publishes what the dead `node`'s sessions' ends did, as that node would have: the
    /// memberships and metadata first, then the users now online nowhere.
    private func report(_ reaped: ReapedSessions, ofNode node: String) {
        guard let bus, !reaped.isEmpty else { return }
        if !reaped.timedOut.isEmpty || !reaped.metadata.isEmpty {
            bus.publish(DeadNodeSessionsEnded(node: node, timedOut: reaped.timedOut, metadata: reaped.metadata))
        }
        for user in reaped.usersOffline { bus.publish(UserOnlineAcrossNodes(user: user, ended: .timedOut)) }
    }

    /// This node was reaped (paused, or cut off from Redis, past its record's expiry): what its
    /// sessions held is gone or counting down elsewhere, so they end (each user's sessions here,
    /// told `kickedOutByServer`, as the server API's disconnect does), then the node clears its
    /// mark and writes its record again.
    private func endReapedSessions(_ clock: any SwitchboardClock) async {
        inbound.log(.warning, "this node was reaped by the cluster (its liveness record had expired): its sessions end")
        let users = listening.compactMap { listened -> UserKey? in
            if case .messages(.user(let user)) = listened { user } else { nil }
        }
        if let bus {
            for user in users {
                _ = try? await bus.request(
                    DisconnectUser(
                        caller: .server(app: user.app, userId: user.userId), userId: user.userId,
                        detail: "this node was cut off from the cluster and its sessions were ended"))
            }
        }
        do {
            try await rejoin(now: clock.wallNow)
        } catch {
            inbound.log(.warning, "this node's liveness record was not written: \(error)")
        }
    }

    // MARK: Listening

    /// Subscribes this node to the Redis channel of `listened`, unless it is already; a failure
    /// is the timeout of the asking `operation`.
    private func open(_ listened: Listened, operation: String) async throws(RtmError) -> Done {
        try await turns.run { () async throws(RtmError) in try await openInTurn(listened, operation: operation) }
    }

    private func openInTurn(_ listened: Listened, operation: String) async throws(RtmError) -> Done {
        guard !listening.contains(listened) else { return Done() }
        do {
            try await redis.subscribe(listened.channel)
        } catch {
            throw RtmError(listened.timeoutCode, operation: operation, reason: "the cluster's Redis cannot be reached: \(error)")
        }
        listening.insert(listened)
        if case .messages(.user(let user)) = listened {
            let listing: OnlineSets.Listing
            do {
                listing = try await onlineSets.list(
                    user, node: configuration.nodeID, limit: limits?.limits(for: user.app).sessions.concurrentUsers)
            } catch {
                await close(listened)
                throw RtmError(listened.timeoutCode, operation: operation, reason: "the cluster's Redis cannot be reached: \(error)")
            }
            switch listing {
            case .full(let limit):
                await close(listened)
                throw RtmError(
                    .loginNoServerResources, operation: operation,
                    reason: "app \(user.app) already has \(limit) users online across the cluster")
            case .listed(let first):
                endReasons[user] = nil
                if first { bus?.publish(UserOnlineAcrossNodes(user: user, ended: nil)) }
            }
        }
        // The listener that asked may have gone while Redis answered.
        if !hasListener(listened) { await close(listened) }
        return Done()
    }

    /// Unsubscribes this node from the Redis channel of `listened`; for a user's messages, first
    /// takes this node off the user's online set (and waits for Redis to confirm it). Called in a
    /// turn.
    private func close(_ listened: Listened) async {
        guard listening.remove(listened) != nil else { return }
        if case .messages(.user(let user)) = listened {
            let reason = endReasons.removeValue(forKey: user) ?? .logout
            do {
                if try await onlineSets.unlist(user, node: configuration.nodeID) { bus?.publish(UserOnlineAcrossNodes(user: user, ended: reason)) }
            } catch {
                inbound.log(.warning, "this node stays listed for \(user) in Redis: \(error)")
            }
        }
        await redis.unsubscribe(listened.channel)
    }

    /// After the subscriber's link came back (Redis may have restarted with nothing kept): lists
    /// this node again in the online set of every user it has sessions of and writes back the
    /// session directory's entries of its sessions, so they can still be taken over, retrying
    /// while the command connection is still coming back (up to 30 s, in real time, as the
    /// connections' own reconnecting is paced); then tells the modules (`SharedStoreReconnected`),
    /// whose stores write back what this node's sessions held there.
    private func listUsersAgain() async {
        for attempt in 1...150 {
            do {
                try await turns.run { () async throws(RtmError) in
                    for case .messages(.user(let user)) in listening {
                        do {
                            // Listed again, not logged in: no limit, and no one is told the user came online.
                            _ = try await onlineSets.list(user, node: configuration.nodeID, limit: nil)
                        } catch {
                            throw RtmError(.loginTimeout, operation: OpenRelay.operation, reason: "\(error)")
                        }
                    }
                    let held = directoryShare.withLock { $0 }
                    do {
                        let restored = try await sessionDirectory.restore(held)
                        if restored > 0 { inbound.log(.warning, "wrote back \(restored) sessions the session directory had lost") }
                    } catch {
                        throw RtmError(.loginTimeout, operation: OpenRelay.operation, reason: "\(error)")
                    }
                }
                bus?.publish(SharedStoreReconnected())
                return
            } catch {
                if attempt == 150 { inbound.log(.warning, "this node's users are not listed online in Redis again: \(error)") }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    private func hasListener(_ listened: Listened) -> Bool {
        switch listened {
        case .messages(.channel(let channel)): membership.read { !$0.isEmpty(channel) }
        case .messages(.user(let user)): users.isOnline(user)
        case .metadata(.channel(let channel)): membership.read { !$0.listeners(of: channel, hearing: .metadata).isEmpty }
        case .metadata(.user(let user)): userMetadataSubscribers[user] != nil
        case .locks(let channel): membership.read { !$0.isEmpty(channel) }
        case .presence(let channel): membership.read { !$0.listeners(of: channel, hearing: .presence).isEmpty }
        case .topics(let channel): membership.read { !$0.isEmpty(channel) }
        }
    }

    private func membershipChanged(_ update: MembershipUpdate) async {
        switch update {
        case .changed(let change):
            await channelChanged(change.channel)
        case .sessionEnded(let event, let left):
            inbound.claims.withLock { $0.ended(event.session, of: event.caller.user) }
            directoryShare.withLock { $0[event.session] = nil }
            if event.reason != .movedToAnotherNode {
                let directory = sessionDirectory
                let caller = event.caller
                Task {
                    do {
                        try await directory.forget(caller)
                    } catch {
                        inbound.log(.warning, "\(caller) stays in the cluster's session directory until this node is reaped: \(error)")
                    }
                }
            }
            for change in left { await channelChanged(change.channel) }
            if users.close(event.caller) {
                endReasons[event.caller.user] = event.reason
                await closeIfUnheard(.messages(.user(event.caller.user)))
            }
        }
    }

    private func channelChanged(_ channel: ChannelKey) async {
        await closeIfUnheard(.messages(.channel(channel)))
        await closeIfUnheard(.metadata(.channel(channel)))
        await closeIfUnheard(.locks(channel))
        await closeIfUnheard(.presence(channel))
        if channel.type == .stream { await closeIfUnheard(.topics(channel)) }
    }

    private func userMetadataSubscriptionChanged(_ event: UserMetadataSubscriptionChanged) async {
        guard !event.subscribed else {
            userMetadataSubscribers[event.user, default: []].insert(event.session)
            return
        }
        userMetadataSubscribers[event.user]?.remove(event.session)
        if userMetadataSubscribers[event.user]?.isEmpty == true { userMetadataSubscribers[event.user] = nil }
        await closeIfUnheard(.metadata(.user(event.user)))
    }

    private func sessionOpened(_ event: SessionOpened) {
        _ = users.open(event.caller)
    }

    private func closeIfUnheard(_ listened: Listened) async {
        try? await turns.run { () async throws(RtmError) in
            if listening.contains(listened), !hasListener(listened) { await close(listened) }
        }
    }
}
