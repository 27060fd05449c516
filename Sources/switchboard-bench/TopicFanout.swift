import SwitchboardBench

extension BenchRun {
    /// Topic fan-out: one publisher joins a topic of a stream channel and publishes in it; each
    /// subscriber joins the channel and subscribes to that publisher in the topic.
    func topicFanout(_ context: RunContext) -> Topology {
        let channel = "stream-\(tag)"
        let topic = "bench"
        let payload = options.payload
        var topology = Topology()
        topology.publishers = (0..<options.publishers).map {
            BenchClient(
                userId: "p\($0)-\(tag)", run: context,
                publisher: Publisher(window: options.window, freeRunning: options.rate == 0) { _, now in
                    .stream(
                        .publishTopicMessage(
                            channel: channel, topic: topic, message: .binary(PayloadStamp.make(size: payload, timestamp: now)),
                            customType: "", sendTs: 0))
                })
        }
        topology.publisherSetUp = { try await $0.joinStream(channel, publishingIn: topic) }
        let publisherIds = topology.publishers.map(\.userId)
        topology.subscribers = (0..<options.subscribers).map { index in
            (
                BenchClient(userId: "s\(index)-\(tag)", run: context),
                { client in
                    try await client.joinStream(channel)
                    try await client.subscribeTopic(channel, topic: topic, users: publisherIds)
                }
            )
        }
        topology.receiversPerPublish = options.subscribers
        return topology
    }
}
