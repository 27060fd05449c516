import Synchronization
import SwitchboardBench
import SwitchboardTransport

extension BenchRun {
    /// Storage events: a writer sets the one item of a message channel again and again; each
    /// subscriber of the channel's metadata gets an update event per write, carrying the whole
    /// set, whose value says which write it reports and when it was sent. A subscriber must never
    /// see an older revision after a newer one. Writing starts once every subscriber has its
    /// snapshot: the `ok` of a subscribe may come before the storage module has taken it in.
    ///
    /// With several writers, a write committed with others may be told after a later revision
    /// already went out; the server then leaves it untold (its set is older), for every
    /// subscriber alike. Such writes, told to nobody, are counted as `superseded`, not lost; a
    /// write told to some subscribers but not to others is lost.
    func storageFanout(_ context: RunContext) -> Topology {
        let channel = "sf-\(tag)"
        var topology = Topology()
        let writers = options.publishers
        topology.publishers = (0..<writers).map {
            BenchClient(userId: "w\($0)-\(tag)", run: context, publisher: metadataWriter(channel, index: $0, of: writers))
        }
        let watches = (0..<options.subscribers).map { _ in RevisionWatch() }
        topology.subscribers = watches.enumerated().map { index, watch in
            (
                BenchClient(
                    userId: "s\(index)-\(tag)", run: context,
                    onPush: { bytes, loop in watch.received(bytes, recorder: context.recorder(for: loop), measuring: context.measuring) }),
                { client in
                    try await client.subscribe(channel, features: .metadata)
                    try await watch.snapshotArrived(within: .seconds(5))
                }
            )
        }
        topology.receiversPerPublish = options.subscribers
        let publishers = topology.publishers.compactMap(\.publisher)
        topology.verify = {
            let heard = watches.map(\.writes)
            let toldToAnyone = heard.reduce(into: UserBitmap(capacity: 0)) { $0.formUnion($1) }
            let superseded = publishers.reduce(0) { $0 + $1.accepted } - toldToAnyone.count
            // Expected then counts every write told to anyone, for every subscriber.
            var verification = Topology.Verification()
            verification.notDue = superseded * watches.count
            verification.fields.add("superseded", superseded)
            verification.fields.add("out_of_order", watches.reduce(0) { $0 + $1.outOfOrder })
            return verification
        }
        return topology
    }
}

/// One subscriber's storage events: update events count as deliveries, stamped by their writer;
/// revisions must only grow.
final class RevisionWatch: Sendable {
    private struct State {
        var revision: Int64 = 0
        var outOfOrder = 0
        var snapshot = false
        var writes = UserBitmap(capacity: 1 << 16)
    }

    private let state = Mutex(State())

    /// Updates that carried a revision at or below one seen before.
    var outOfOrder: Int { state.withLock { $0.outOfOrder } }
    /// The writes this subscriber was told of, by number.
    var writes: UserBitmap { state.withLock { $0.writes } }

    /// Returns once the snapshot that follows a subscribe has arrived; throws after `timeout`.
    func snapshotArrived(within timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !state.withLock({ $0.snapshot }) {
            guard ContinuousClock.now < deadline else { throw BenchClient.Failure(description: "no storage snapshot") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// A push arrived on the loop whose recorder is `recorder`.
    func received(_ bytes: [UInt8], recorder: LoopRecorder, measuring: Bool) {
        guard let scan = MetadataScan.scan(bytes) else { return }
        guard scan.eventType == 3, let sentAt = scan.timestamp, let write = scan.sequence else {
            if scan.eventType == 1 { state.withLock { $0.snapshot = true } }
            return
        }
        state.withLock { state in
            if scan.majorRevision <= state.revision { state.outOfOrder += 1 }
            state.revision = max(state.revision, scan.majorRevision)
            state.writes.insert(Int(write))
        }
        recorder.delivered(sentAt: sentAt, now: MonotonicClock.now(), measuring: measuring)
    }
}
