/// Durations counted into fixed buckets (Prometheus's convention: seconds, upper bounds).
/// Not synchronized: its owner keeps it under a lock.
struct LatencyHistogram: Sendable {
    /// The buckets' upper bounds in seconds, from 100 µs to 10 s.
    static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// What a histogram counted.
    struct Snapshot: Sendable {
        /// Observations per bucket (not cumulative); those above the last bound are in `count` only.
        var buckets = [UInt64](repeating: 0, count: LatencyHistogram.bounds.count)
        /// Every observation.
        var count: UInt64 = 0
        /// The sum of every observation, in seconds.
        var sum: Double = 0
    }

    private(set) var snapshot = Snapshot()

    /// Counts one duration.
    mutating func observe(_ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        if let index = Self.bounds.firstIndex(where: { seconds <= $0 }) { snapshot.buckets[index] += 1 }
        snapshot.count += 1
        snapshot.sum += seconds
    }
}
