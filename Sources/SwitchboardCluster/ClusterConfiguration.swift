import Foundation
import SwitchboardRedis

/// How a node joins a cluster: the Redis every node of it shares, and this node's name.
public struct ClusterConfiguration: Sendable {
    /// The Redis server every node of the cluster uses.
    public var redis: RedisConfiguration
    /// This node's name, unique in the cluster.
    public var nodeID: String
    /// How often the node proves its pub/sub link with a probe and writes its liveness record.
    public var beatInterval: Duration = .seconds(1)
    /// How long a node's liveness record lasts without a new beat, in beats.
    public var beatsToLive = 3
    /// How recent the last probe that came back must be for the node to be ready.
    public var probeWindow: Duration = .seconds(3)
    /// How long a command of the server API on a user's sessions on every node waits for the
    /// nodes that heard it to answer (`CommandUserAcrossNodes`).
    public var commandWait: Duration = .seconds(2)

    /// A node named `nodeID` (a generated name when nil) of the cluster on `url`.
    public init(url: RedisURL, nodeID: String? = nil) {
        self.redis = RedisConfiguration(url: url)
        self.nodeID = nodeID ?? Self.generatedNodeID()
    }

    /// A name no other node picks: the host's name and a random suffix.
    public static func generatedNodeID() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        let suffix = UUID().uuidString.prefix(8).lowercased()
        return "\(host)-\(suffix)"
    }
}
