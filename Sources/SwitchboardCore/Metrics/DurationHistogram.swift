/// Durations counted into fixed buckets (Prometheus's convention: seconds, upper bounds): the
/// server's request latency, a module's own (the metadata store's commits). Not synchronized:
/// its owner keeps it under a lock or in an actor.
public struct DurationHistogram: Sendable, Hashable {
    /// The buckets' upper bounds in seconds, from 100 µs to 10 s.
    public static let bounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// What a histogram counted.
    public struct Snapshot: Sendable, Hashable {
        /// Observations per bucket (not cumulative); those above the last bound are in `count` only.
        public var buckets = [UInt64](repeating: 0, count: DurationHistogram.bounds.count)
        /// Every observation.
        public var count: UInt64 = 0
        /// The sum of every observation, in seconds.
        public var sum: Double = 0
        /// Nothing counted.
        public init() {}
    }

    /// What it counted so far.
    public private(set) var snapshot = Snapshot()

    /// An empty histogram.
    public init() {}

    /// Counts one duration.
    public mutating func observe(_ duration: PortableDuration) {
        let seconds = duration.inSeconds
        if let index = Self.bounds.firstIndex(where: { seconds <= $0 }) { snapshot.buckets[index] += 1 }
        snapshot.count += 1
        snapshot.sum += seconds
    }
}

extension PortableDuration {
    /// The duration in seconds, as Prometheus and most reports give it.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
