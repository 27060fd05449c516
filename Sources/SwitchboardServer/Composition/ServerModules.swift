import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardLock
import SwitchboardMessageRouter
import SwitchboardPresence
import SwitchboardSession
import SwitchboardStorage
import SwitchboardTopicRouter
import SwitchboardWebhooks

/// The modules a server runs: one slot per built-in module, each replaceable, plus any number of
/// extra modules that the built-in ones do not know about.
public struct ServerModules: Sendable {
    /// Logins, heartbeats, resume (answers `Login`, `Logout`, `Heartbeat`, `RenewToken`).
    public var session: any Module
    /// Message channels and user channels (answers `Subscribe`, `Unsubscribe`, `Publish`).
    public var messageRouter: any Module
    /// Stream channels and topics (answers `JoinStreamChannel`, `LeaveStreamChannel`, `RenewStreamChannelToken`,
    /// `JoinTopic`, `LeaveTopic`, `PublishTopicMessage`, `SubscribeTopic`, `UnsubscribeTopic`); in this
    /// process's memory, and the cross-node part in the cluster's Redis in cluster mode.
    public var topicRouter: any Module
    /// Occupancy, temporary states, presence events (answers `WhoNow`, `WhereNow`, `SetPresenceState`,
    /// `GetPresenceState`, `RemovePresenceState`, `GetUserPresence`); in this process's memory, and
    /// in the cluster's Redis in cluster mode.
    public var presence: any Module
    /// Channel and user metadata (answers the `…ChannelMetadata`, `…UserMetadata` and user-metadata
    /// subscription requests); in SQLite under the data directory unless configured in memory, and
    /// in the cluster's Redis in cluster mode.
    public var storage: any Module
    /// Locks (answers `SetLock`, `RemoveLock`, `AcquireLock`, `ReleaseLock`, `RevokeLock`, `GetLocks`, `CheckLockHolder`);
    /// in this process's memory, and in the cluster's Redis in cluster mode.
    public var lock: any Module
    /// Webhooks to the app's backend, when `ServerConfiguration.webhooks` names a receiver; nil
    /// otherwise (then nothing listens for the events only webhooks need, and their publishers
    /// skip them).
    public var webhooks: (any Module)?
    /// Extra modules, started after the built-in ones, in order.
    public var extensions: [any Module] = []
    /// In cluster mode, the link to the other nodes (the relay the modules ask for); nil on one
    /// node.
    public var cluster: ClusterLink?

    /// The built-in modules for `configuration`.
    public init(for configuration: ServerConfiguration) {
        // The apps served are the server's limits book's (`configuration.appIds`, then a reload's).
        session = Session()
        messageRouter = MessageRouter()
        topicRouter = TopicRouter(store: Self.topicStore(for: configuration))
        presence = Presence(store: Self.presenceStore(for: configuration))
        lock = Lock(store: Self.lockStore(for: configuration))
        cluster = configuration.cluster.map { ClusterLink($0) }
        storage = Storage(store: Self.metadataStore(for: configuration))
        webhooks = configuration.webhooks.flatMap { webhooks in
            guard webhooks.hasTargets else { return nil }
            let queue: any WebhookQueue =
                switch (configuration.cluster, configuration.webhookQueue) {
                // In the cluster's Redis, where another node takes it over if this one dies.
                case (let cluster?, _): RedisWebhookQueue(configuration: cluster.redis, nodeID: cluster.nodeID)
                case (nil, .sqlite): SQLiteWebhookQueue(directory: configuration.dataDirectory)
                case (nil, .memory): InMemoryWebhookQueue()
                }
            return Webhooks(configuration: webhooks, queue: queue, poster: HTTPWebhookPoster())
        }
    }

    /// Where metadata lives: in the cluster's Redis (shared by every node) in cluster mode, else
    /// as `metadataStorage` says.
    static func metadataStore(for configuration: ServerConfiguration) -> any MetadataStore {
        if let cluster = configuration.cluster {
            return RedisMetadataStore(configuration: cluster.redis, nodeID: cluster.nodeID, locksInRedis: true)
        }
        switch configuration.metadataStorage {
        case .memory: return InMemoryMetadataStore()
        case .sqlite: return SQLiteMetadataStore(directory: configuration.dataDirectory)
        }
    }

    /// Where locks live: in the cluster's Redis (one set for every node) in cluster mode, else in
    /// this process's memory.
    static func lockStore(for configuration: ServerConfiguration) -> any LockStore {
        guard let cluster = configuration.cluster else { return InMemoryLockStore() }
        return RedisLockStore(configuration: cluster.redis, nodeID: cluster.nodeID)
    }

    /// Where presence lives: in the cluster's Redis (one roster per channel for every node) in
    /// cluster mode, else in this process's memory.
    static func presenceStore(for configuration: ServerConfiguration) -> any PresenceStore {
        guard let cluster = configuration.cluster else { return InMemoryPresenceStore() }
        return RedisPresenceStore(configuration: cluster.redis, nodeID: cluster.nodeID)
    }

    /// Where stream channels and topics live: in cluster mode, who is in each stream channel and
    /// who publishes where in the cluster's Redis (this node's sessions' subscriptions in its
    /// memory), else all in this process's memory.
    static func topicStore(for configuration: ServerConfiguration) -> any TopicStore {
        guard let cluster = configuration.cluster else { return InMemoryTopicStore() }
        return RedisTopicStore(configuration: cluster.redis, nodeID: cluster.nodeID)
    }

    /// In cluster mode, whether this node's connections to the cluster's Redis are up: the link's
    /// and, when the storage and lock modules keep their state there, their stores'. Nil on one node.
    var clusterRedisConnected: (@Sendable () -> Bool)? {
        guard let link = cluster else { return nil }
        let metadata = (storage as? Storage)?.store as? RedisMetadataStore
        let locks = (lock as? Lock)?.store as? RedisLockStore
        let presence = (presence as? Presence)?.store as? RedisPresenceStore
        let topics = (topicRouter as? TopicRouter)?.store as? RedisTopicStore
        return {
            link.isConnected && (metadata?.isConnected ?? true) && (locks?.isConnected ?? true) && (presence?.isConnected ?? true)
                && (topics?.isConnected ?? true)
        }
    }

    /// In cluster mode, the modules' stores that keep state per session in the cluster's Redis
    /// (`DeadNodeStep`): the link's reaper ends a dead node's sessions' share of each.
    var deadNodeSteps: [any DeadNodeStep] {
        [
            (storage as? Storage)?.store as? any DeadNodeStep, (lock as? Lock)?.store as? any DeadNodeStep,
            (presence as? Presence)?.store as? any DeadNodeStep, (webhooks as? Webhooks)?.queue as? any DeadNodeStep,
            (topicRouter as? TopicRouter)?.store as? any DeadNodeStep,
        ].compactMap { $0 }
    }

    /// Every module, in start order.
    var all: [any Module] {
        [session, messageRouter, topicRouter, presence, storage, lock] + (webhooks.map { [$0] } ?? []) + extensions
            + (cluster.map { [$0] } ?? [])
    }
}
