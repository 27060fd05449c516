import SwitchboardBench
import SwitchboardCore

extension BenchRun {
    /// Metadata reads: readers ask for the set of one message channel (`getChannelMetadata`),
    /// which holds one item written before the run; every answer must carry that item.
    func storageReads(_ context: RunContext) -> Topology {
        let channel = "sr-\(tag)"
        let written = ValueStamp.make(sequence: 7, timestamp: 1_000_000_007, size: options.payload)
        var topology = Topology()
        topology.publishers = (0..<options.publishers).map { index in
            BenchClient(
                userId: "r\(index)-\(tag)", run: context,
                publisher: Publisher(
                    window: options.window, freeRunning: options.rate == 0, answerLatency: options.rate == 0,
                    check: { answer in
                        let scan = MetadataScan.scan(answer)
                        return scan?.itemCount == 1 && scan?.sequence == 7 && scan?.timestamp == 1_000_000_007
                    },
                    request: { _, _ in .storage(.getChannel(channelType: .message, channel: channel)) }))
        }
        topology.publisherSetUp = { try await $0.expectOK(Self.setItem(in: channel, value: written)) }
        return topology
    }
}
