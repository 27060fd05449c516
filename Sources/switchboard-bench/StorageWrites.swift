import SwitchboardBench
import SwitchboardCore
import SwitchboardWire

extension BenchRun {
    /// Metadata writes: each writer sets the one item of a message channel of its own
    /// (`setChannelMetadata`), answered once the write is on disk. Afterwards each channel is read
    /// back and must hold its writer's last write.
    func storageWrites(_ context: RunContext) -> Topology {
        var topology = Topology()
        let channels = (0..<options.publishers).map { "sw\($0)-\(tag)" }
        topology.publishers = channels.enumerated().map { index, channel in
            BenchClient(userId: "w\(index)-\(tag)", run: context, publisher: metadataWriter(channel))
        }
        let writers = topology.publishers
        topology.verify = {
            var verification = Topology.Verification()
            var mismatched = 0
            for (writer, channel) in zip(writers, channels) {
                guard let publisher = writer.publisher else { continue }
                let last = UInt64(publisher.accepted + publisher.refused) &- 1
                let stored = try? await writer.request(.storage(.getChannel(channelType: .message, channel: channel)))
                let value = stored?.metadata?.items.first?.value
                if value.flatMap(ValueStamp.read)?.sequence != last { mismatched += 1 }
            }
            verification.lost = mismatched
            verification.fields.add("read_back_mismatched", mismatched)
            return verification
        }
        return topology
    }

    /// A publisher that sets item `k` of message channel `channel` to a `ValueStamp` of
    /// `--payload` bytes, recording how long each write takes to be answered. Writer `index` of
    /// `writers` numbers its writes `index`, `index + writers`, … so that no two writers share one.
    func metadataWriter(_ channel: String, index: Int = 0, of writers: Int = 1) -> Publisher {
        let size = options.payload
        return Publisher(window: options.window, freeRunning: options.rate == 0, answerLatency: options.rate == 0) { sequence, now in
            let number = sequence * UInt64(writers) + UInt64(index)
            return Self.setItem(in: channel, value: ValueStamp.make(sequence: number, timestamp: now, size: size))
        }
    }

    /// `setChannelMetadata` of one item, `k`, in message channel `channel`.
    static func setItem(in channel: String, value: String) -> ClientOperation {
        .storage(
            .writeChannel(
                .set, channelType: .message, channel: channel,
                data: Metadata(items: [MetadataItem(key: "k", value: value)]), options: MetadataOptions(), lock: nil))
    }
}
