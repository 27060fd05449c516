import Synchronization
import SwitchboardBench
import SwitchboardTransport

/// Receive-side accounting of one event loop: deliveries counted and latencies recorded on the
/// loop thread as frames arrive. The lock is only contended when the run reads a snapshot.
final class LoopRecorder: Sendable {
    private struct State {
        var deliveries = 0
        var histogram = LatencyHistogram()
    }

    private let state = Mutex(State())

    /// One message arrived at `now`, stamped `sentAt`; its latency counts when `measuring`.
    func delivered(sentAt: UInt64, now: UInt64, measuring: Bool) {
        state.withLock { state in
            state.deliveries += 1
            if measuring { state.histogram.record(now &- sentAt) }
        }
    }

    /// Deliveries so far.
    var deliveries: Int { state.withLock { $0.deliveries } }

    /// Latencies recorded so far.
    var histogram: LatencyHistogram { state.withLock { $0.histogram } }
}

/// What every client of one run shares: a recorder per loop, and whether latencies count now.
final class RunContext: Sendable {
    let group: EventLoopGroup
    /// The local address connections are made from; nil: the kernel's choice.
    let sourceAddress: String?
    /// One recorder per loop of `group`, in the same order.
    private let recorders: [LoopRecorder]
    private let measuringFlag = Atomic<Bool>(false)

    init(group: EventLoopGroup, sourceAddress: String? = nil) {
        self.group = group
        self.sourceAddress = sourceAddress
        recorders = group.loops.map { _ in LoopRecorder() }
    }

    /// Whether latencies are being recorded.
    var measuring: Bool {
        get { measuringFlag.load(ordering: .relaxed) }
        set { measuringFlag.store(newValue, ordering: .relaxed) }
    }

    /// The recorder of `loop` (a linear search by identity: there are a handful of loops, and it
    /// runs for every delivery).
    func recorder(for loop: EventLoop) -> LoopRecorder {
        let loops = group.loops
        for index in loops.indices where loops[index] === loop { return recorders[index] }
        preconditionFailure("a loop outside the run's group")
    }

    /// Deliveries over every loop.
    var deliveries: Int { recorders.reduce(0) { $0 + $1.deliveries } }

    /// Latencies over every loop.
    var histogram: LatencyHistogram {
        var merged = LatencyHistogram()
        for recorder in recorders { merged.merge(recorder.histogram) }
        return merged
    }
}
