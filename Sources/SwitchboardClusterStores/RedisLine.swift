import Synchronization
import SwitchboardCluster
import SwitchboardCore
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

extension RedisLine {
    /// Connects; a failure throws `failure` of a description that names the Redis and `what` the
    /// store keeps. (What this node's earlier run left is reaped by the cluster link as it opens,
    /// `ClusterLink.open`, as a dead node's is.)
    func open(_ configuration: RedisConfiguration, keeping what: String, failure: (String) -> any Error) async throws {
        do {
            try await connect(configuration)
        } catch {
            throw failure("\(what) in Redis \(configuration.url): cannot connect: \(error)")
        }
    }
}

/// Sessions as a store shared by nodes records them: `node:session`, since each node numbers its
/// own sessions from 1.
struct NodeSessions: Sendable {
    /// The node's id as a key part.
    let node: String

    init(nodeID: String) { node = KeyPart.escaped(nodeID) }

    /// `node:session`.
    func id(_ session: SessionID) -> String { "\(node):\(session.rawValue)" }

    /// `node:session` for a session of another node.
    static func id(_ session: SessionID, ofNode nodeID: String) -> String { "\(KeyPart.escaped(nodeID)):\(session.rawValue)" }

    /// The session of this node that `id` names; nil for another node's.
    func session(of id: String) -> SessionID? {
        guard let colon = id.lastIndex(of: ":"), id[..<colon] == node, let number = UInt64(id[id.index(after: colon)...]) else {
            return nil
        }
        return SessionID(number)
    }
}
