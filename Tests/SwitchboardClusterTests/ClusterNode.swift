import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardLock
import SwitchboardMessageRouter
import SwitchboardPresence
import SwitchboardRedis
import SwitchboardSession
import SwitchboardStorage
import SwitchboardTestKit
import SwitchboardTopicRouter
import SwitchboardTransport

/// A node of a cluster in this process: its own bus with the real session module, message router
/// and cluster link (and, when asked, the storage module over the Redis metadata store and the
/// lock module over the Redis lock store, the presence module over the Redis presence store, and
/// the topic router over the Redis topic store),
/// on a shared redis-server.
struct ClusterNode {
    let link: ClusterLink
    let harness: ModuleHarness
    /// The node's stores that end a dead node's sessions' share when it reaps one.
    var deadNodeSteps: [any DeadNodeStep] = []

    /// Starts node `name` on `redis`, with the storage module when `storage` is true and the lock
    /// module when `locks` is (then metadata writes check their locks in Redis, as `serve
    /// --cluster` composes them), the presence module when `presence` is, and the topic router
    /// when `topics` is.
    static func start(
        _ name: String, on redis: RedisServer, storage: Bool = false, locks: Bool = false, presence: Bool = false,
        topics: Bool = false, limits: Limits = Limits()
    ) async throws -> ClusterNode {
        let configuration = ClusterConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port), nodeID: name)
        let link = ClusterLink(configuration)
        let metadataStore = storage ? RedisMetadataStore(configuration: configuration.redis, nodeID: name, locksInRedis: locks) : nil
        let lockStore = locks ? RedisLockStore(configuration: configuration.redis, nodeID: name) : nil
        let presenceStore = presence ? RedisPresenceStore(configuration: configuration.redis, nodeID: name) : nil
        let topicStore = topics ? RedisTopicStore(configuration: configuration.redis, nodeID: name) : nil
        let steps = [metadataStore as (any DeadNodeStep)?, lockStore, presenceStore, topicStore].compactMap { $0 }
        link.reap(with: steps)
        let metadata = metadataStore.map { Storage(store: $0) }
        let lock = lockStore.map { Lock(store: $0) }
        let presenceModule = presenceStore.map { Presence(store: $0) }
        let topicRouter = topicStore.map { TopicRouter(store: $0) }
        let modules: [any Module] =
            [Session(), MessageRouter()] + (metadata.map { [$0] } ?? []) + (lock.map { [$0] } ?? []) + (presenceModule.map { [$0] } ?? [])
            + (topicRouter.map { [$0] } ?? [])
        let harness = await ModuleHarness(limits: limits, modules: modules + [link])
        try await metadata?.open()
        try await lock?.open()
        try await presenceModule?.open()
        try await topicRouter?.open()
        // Last, as `serve` opens it: it ends what this node's earlier run left through the stores.
        try await link.open()
        return ClusterNode(link: link, harness: harness, deadNodeSteps: steps)
    }

    /// Starts nodes `names` on `redis`, each as `start` does.
    static func start(
        _ names: [String], on redis: RedisServer, storage: Bool = false, locks: Bool = false, presence: Bool = false,
        topics: Bool = false, limits: Limits = Limits()
    ) async throws -> [ClusterNode] {
        var nodes: [ClusterNode] = []
        for name in names {
            nodes.append(
                try await start(name, on: redis, storage: storage, locks: locks, presence: presence, topics: topics, limits: limits))
        }
        return nodes
    }

    /// Logs `user` in and subscribes it to the room with `features`.
    func member(_ user: String, features: RtmSubscribeChannelFeature) async throws -> Caller {
        let caller = try await logIn(user)
        _ = try await harness.bus.request(Subscribe(caller: caller, channelName: "room", features: features))
        return caller
    }

    func logIn(_ user: String) async throws -> Caller {
        try await harness.bus.request(Login(appId: "app", userId: user, token: "")).caller
    }

    func publish(_ caller: Caller, _ type: RtmChannelType, to name: String, _ text: String) async throws {
        _ = try await harness.bus.request(Publish(caller: caller, channelType: type, channelName: name, payload: .string(text)))
    }

    func messages(to caller: Caller) -> [String] {
        harness.outbox.messages(to: caller.session).compactMap {
            if case .string(let text) = $0.payload { text } else { nil }
        }
    }

    /// The storage events `caller` got, in order.
    func storageEvents(to caller: Caller) -> [StorageEvent] {
        harness.outbox.pushes(to: caller.session).compactMap { if case .storage(let event) = $0 { event } else { nil } }
    }

    /// The lock pushes `caller` got, in order.
    func lockPushes(to caller: Caller) -> [LockPush] {
        harness.outbox.pushes(to: caller.session).compactMap { if case .lock(let push) = $0 { push } else { nil } }
    }

    /// The lock events `caller` got, in order.
    func lockEvents(to caller: Caller) -> [LockEventDelivery] {
        lockPushes(to: caller).compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// The fencing tokens of the grants `caller` got, in order.
    func grants(to caller: Caller) -> [UInt64] {
        lockPushes(to: caller).compactMap { if case .granted(_, let token) = $0 { token } else { nil } }
    }

    /// The presence events `caller` got, in order.
    func presenceEvents(to caller: Caller) -> [PresenceDelivery] {
        harness.outbox.pushes(to: caller.session).compactMap { if case .presence(let event) = $0 { event } else { nil } }
    }

    /// The topic events `caller` got, in order.
    func topicEvents(to caller: Caller) -> [TopicEvent] {
        harness.outbox.pushes(to: caller.session).compactMap { if case .topic(let event) = $0 { event } else { nil } }
    }

    func stop() async { await harness.stop() }
}

extension RedisClient {
    /// How many nodes Redis has subscribed to `channel`.
    func subscribers(of channel: String) async throws -> Int64 {
        let reply = try await send(["PUBSUB", "NUMSUB", channel])
        return reply.elements?.last?.integer ?? -1
    }
}

extension RedisServer {
    /// Runs `body` with a client of this server of its own, closed when `body` returns.
    func withClient(_ body: (RedisClient) async throws -> Void) async throws {
        let group = try EventLoopGroup(threads: 1)
        let client = try await RedisClient.connect(RedisURL(host: "127.0.0.1", port: port), group: group)
        let outcome: Result<Void, any Error>
        do {
            outcome = .success(try await body(client))
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        try await BlockingWork.run { group.shutdown() }
        try outcome.get()
    }
}

/// Moves the clocks of `nodes` on by `seconds`, one second at a time, and after each second waits
/// (a bounded while) until each node has made that second's beat and finished the reaping pass
/// the beat may have started. A blind pause is not enough on a busy machine: a beat still under
/// way when the clock moves on makes the next tick's, and a reaping pass still under way at a
/// test's last step makes that step's beat start none, so a dead node would never be reaped.
func advance(_ nodes: [ClusterNode], by seconds: Int) async throws {
    for _ in 0..<seconds {
        var beaten: [Int] = []
        for node in nodes { beaten.append(await node.link.beatsCompleted) }
        for node in nodes { node.harness.clock.advance(by: .seconds(1)) }
        for (node, before) in zip(nodes, beaten) {
            let link = node.link
            // A stopped node makes no beat: the wait ends at its bound.
            _ = await eventuallyAsync(within: .seconds(3)) {
                let (beats, reaping) = (await link.beatsCompleted, await link.reapingUnderWay)
                return beats > before && !reaping
            }
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
