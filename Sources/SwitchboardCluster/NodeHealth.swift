import Synchronization
import SwitchboardCore
import SwitchboardRedis

/// What a node knows of its own standing in the cluster: when its last pub/sub probe came back
/// through Redis (proof that messages from other nodes reach it), and how many nodes were alive
/// at its last beat.
///
/// Every `ClusterConfiguration.beatInterval` the link publishes a probe on this node's own channel
/// (`sb:n:{node}`), which only this node subscribes to, and writes its liveness record and status
/// (`NodeDirectory`). Times are the injected clock's.
final class NodeHealth: Sendable {
    private struct State {
        var probesSent: UInt64 = 0
        var lastProbeBack: Duration?
        var liveNodes = 0
        var roundTrip: Duration?
    }

    let nodeID: String
    /// The node's own channel.
    let channel: RedisChannel
    private let state = Mutex(State())

    init(nodeID: String) {
        self.nodeID = nodeID
        channel = Self.channel(of: nodeID)
    }

    /// The next probe's payload.
    /// `sb:n:{node}`: node `nodeID`'s own channel, where its probes come back and the answers to
    /// its commands (`UserCommandAnswer`) come in.
    static func channel(of nodeID: String) -> RedisChannel { RedisChannel("sb:n:{\(KeyPart.escaped(nodeID))}") }

    func nextProbe() -> [UInt8] {
        let number = state.withLock { state -> UInt64 in
            state.probesSent += 1
            return state.probesSent
        }
        return Array("probe \(number)".utf8)
    }

    /// A probe came back at `now`.
    func probeCameBack(at now: Duration) {
        state.withLock { $0.lastProbeBack = now }
    }

    /// Whether a probe came back within `window` before `now`.
    func pubSubProven(within window: Duration, now: Duration) -> Bool {
        state.withLock { state in state.lastProbeBack.map { now - $0 <= window } ?? false }
    }

    /// How many nodes were alive at the last beat (this one included).
    var liveNodes: Int {
        get { state.withLock { $0.liveNodes } }
        set { state.withLock { $0.liveNodes = newValue } }
    }

    /// How long the last beat's script took, from sending it to its reply (real time: a
    /// measure of Redis's latency, not a timeout); nil before the first.
    var roundTrip: Duration? {
        get { state.withLock { $0.roundTrip } }
        set { state.withLock { $0.roundTrip = newValue } }
    }
}
