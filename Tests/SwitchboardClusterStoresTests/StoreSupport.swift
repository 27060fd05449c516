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
