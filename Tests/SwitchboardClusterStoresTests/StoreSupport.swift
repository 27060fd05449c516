import SwitchboardClusterStores
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

extension RedisServer {
    /// An opened metadata store of node `node` on this server.
    func metadataStore(node: String = "node-a") async throws -> RedisMetadataStore {
        let store = RedisMetadataStore(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), nodeID: node)
        try await store.open()
        return store
    }
}

extension RedisServer {
    /// An opened lock store of node `node` on this server.
    func lockStore(node: String = "node-a") async throws -> RedisLockStore {
        let store = RedisLockStore(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), nodeID: node)
        try await store.open()
        return store
    }
}

extension RedisServer {
    /// Runs one command on this server through a client of its own.
    func send(_ arguments: [String]) async throws -> RESPValue {
        let group = try EventLoopGroup(threads: 1)
        var reply = RESPValue.null
        var failure: (any Error)?
        do {
            let client = try await RedisClient.connect(RedisURL(host: "127.0.0.1", port: port), group: group)
            do { reply = try await client.send(arguments) } catch { failure = error }
            await client.close()
        } catch {
            failure = error
        }
        try await BlockingWork.run { group.shutdown() }
        if let failure { throw failure }
        return reply
    }

    /// The wall-clock deadlines of the lock store's ttl countdowns, earliest first.
    func countdowns() async throws -> [String] {
        let flat = try await send(["EVAL", "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", "1", "sb:lk:countdowns"])
        return (flat.elements ?? []).enumerated().compactMap { $0.offset % 2 == 1 ? $0.element.string : nil }
    }
}

extension RedisServer {
    /// An opened presence store of node `node` on this server.
    func presenceStore(node: String = "node-a") async throws -> RedisPresenceStore {
        let store = RedisPresenceStore(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), nodeID: node)
        try await store.open()
        return store
    }
}

extension RedisServer {
    /// An opened topic store of node `node` on this server.
    func topicStore(node: String = "node-a") async throws -> RedisTopicStore {
        let store = RedisTopicStore(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), nodeID: node)
        try await store.open()
        return store
    }
}

extension RedisServer {
    /// A subscriber of `channel` on this server of its own loop, recording every payload published
    /// there, in order; close the subscriber and shut the group down when done.
    func recordPublished(on channel: RedisChannel) async throws -> (RedisSubscriber, EventLoopGroup, Recorded<[UInt8]>) {
        let group = try EventLoopGroup(threads: 1)
        let published = Recorded<[UInt8]>()
        let subscriber = try await RedisSubscriber.connect(
            RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), group: group
        ) { event in
            if case .message(let message) = event { published.append(message.payload) }
        }
        try await subscriber.subscribe([channel])
        return (subscriber, group, published)
    }
}
