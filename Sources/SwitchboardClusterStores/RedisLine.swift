import Synchronization
import SwitchboardRedis
import SwitchboardTransport

/// A store's connection to the cluster's Redis: one pipelined `RedisClient` on a loop of its own,
/// from `connect` until `close`.
final class RedisLine: Sendable {
    private struct Connected {
        let group: EventLoopGroup
        let client: RedisClient
    }

    private let connected = Mutex<Connected?>(nil)

    /// Connects; throws when Redis cannot be reached now.
    func connect(_ configuration: RedisConfiguration) async throws {
        let group = try EventLoopGroup(threads: 1)
        do {
            let client = try await RedisClient.connect(configuration, group: group)
            connected.withLock { $0 = Connected(group: group, client: client) }
        } catch {
            group.shutdown()
            throw error
        }
    }

    /// The client; `.closed` before `connect` and after `close`.
    func client() throws(RedisError) -> RedisClient {
        guard let client = connected.withLock({ $0?.client }) else { throw .closed }
        return client
    }

    /// True while the connection is up.
    var isConnected: Bool { connected.withLock { $0?.client.isConnected ?? false } }

    /// Closes the connection and its loop.
    func close() async {
        guard let taken = connected.withLock({ state -> Connected? in
            defer { state = nil }
            return state
        }) else { return }
        await taken.client.close()
        taken.group.shutdown()
    }
}
