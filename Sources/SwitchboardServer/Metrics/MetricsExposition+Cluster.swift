import SwitchboardCluster
import SwitchboardCore

/// The families of cluster mode: the link's view of Redis and of the other nodes.
extension MetricsExposition {
    func writeCluster(_ link: ClusterLink, _ out: inout PrometheusText) {
        let seen = link.received
        out.single(
            "switchboard_cluster_live_nodes", .gauge,
            help: "Nodes of the cluster whose liveness record had not expired at this node's last beat, this one included.",
            UInt64(link.liveNodes))
        out.family(
            "switchboard_cluster_redis_round_trip_seconds", .gauge,
            help: "How long this node's last beat took from sending its script to Redis's reply.")
        out.sample("switchboard_cluster_redis_round_trip_seconds", [], link.redisRoundTrip?.inSeconds ?? 0)
        out.single(
            "switchboard_cluster_relayed_messages_total", .counter,
            help: "Messages other nodes accepted, delivered to this node's listeners.", UInt64(seen.received))
        out.single(
            "switchboard_cluster_messages_not_relayed_total", .counter,
            help: "Messages accepted on this node that did not reach Redis, so the other nodes missed them.",
            UInt64(seen.notRelayed))
        out.single(
            "switchboard_cluster_pubsub_link_losses_total", .counter,
            help: "Times this node's Redis pub/sub link dropped.", UInt64(seen.linkLosses))
        out.single(
            "switchboard_cluster_pubsub_gaps_total", .counter,
            help: "Channels that may have missed messages while the pub/sub link was down, counted at each return.",
            UInt64(seen.gaps))
    }
}
