/// A log-bucketed histogram of non-negative integer samples (latencies in nanoseconds), in the
/// manner of HdrHistogram: every power of two is split into 64 linear sub-buckets, so a reported
/// percentile is within 1/64 (1.6 %) of the true value, in a fixed 30 KB of counters.
public struct LatencyHistogram: Sendable {
    /// Sub-buckets per power of two, as a power of two.
    static let subBucketBits = 6
    static let subBucketCount = 1 << subBucketBits
    /// Enough buckets for every `UInt64`.
    static let bucketCount = (64 - subBucketBits + 1) * subBucketCount

    private var counts: [UInt64]
    /// How many samples were recorded.
    public private(set) var count: UInt64 = 0
    /// The smallest sample, or 0 when empty.
    public private(set) var min: UInt64 = 0
    /// The largest sample, or 0 when empty.
    public private(set) var max: UInt64 = 0
    private var sum: Double = 0

    /// An empty histogram.
    public init() {
        counts = Array(repeating: 0, count: Self.bucketCount)
    }

    /// The bucket `value` falls in.
    static func bucketIndex(of value: UInt64) -> Int {
        if value < UInt64(2 * subBucketCount) { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount
        let shift = exponent - subBucketBits
        return shift * subBucketCount + Int(value >> UInt64(shift))
    }

    /// The smallest and largest value that fall in bucket `index`.
    static func valueRange(ofBucket index: Int) -> ClosedRange<UInt64> {
        if index < 2 * subBucketCount { return UInt64(index)...UInt64(index) }
        let shift = index / subBucketCount - 1
        let sub = UInt64(index - shift * subBucketCount)
        let low = sub << UInt64(shift)
        return low...(low + ((1 << UInt64(shift)) - 1))
    }

    /// Adds one sample.
    public mutating func record(_ value: UInt64) {
        counts[Self.bucketIndex(of: value)] &+= 1
        if count == 0 || value < min { min = value }
        if value > max { max = value }
        count += 1
        sum += Double(value)
    }

    /// Adds every sample of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in counts.indices where other.counts[index] != 0 { counts[index] &+= other.counts[index] }
        if count == 0 || other.min < min { min = other.min }
        if other.max > max { max = other.max }
        count += other.count
        sum += other.sum
    }

    /// The mean of the samples, or 0 when empty.
    public var mean: Double { count == 0 ? 0 : sum / Double(count) }

    /// The value at or below which `quantile` (0…1) of the samples fall: the top of the bucket
    /// holding that rank, never above the largest sample; 0 when empty.
    public func value(atQuantile quantile: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let clamped = Swift.min(Swift.max(quantile, 0), 1)
        let rank = Swift.max(1, UInt64((clamped * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for index in counts.indices where counts[index] != 0 {
            seen += counts[index]
            if seen >= rank { return Swift.min(Self.valueRange(ofBucket: index).upperBound, max) }
        }
        return max
    }
}
