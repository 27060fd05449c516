import SwitchboardClusterStores
import SwitchboardRedis
import SwitchboardTestKit

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
    /// An opened presence store of node `node` on this server.
    func presenceStore(node: String = "node-a") async throws -> RedisPresenceStore {
        let store = RedisPresenceStore(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), nodeID: node)
        try await store.open()
        return store
    }
}
