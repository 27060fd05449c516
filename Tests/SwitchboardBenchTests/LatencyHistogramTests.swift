import Testing
@testable import SwitchboardBench

@Suite(.timeLimit(.minutes(2))) struct LatencyHistogramTests {
    @Test func emptyHistogramReportsZero() {
        let histogram = LatencyHistogram()
        #expect(histogram.count == 0)
        #expect(histogram.value(atQuantile: 0.99) == 0)
        #expect(histogram.mean == 0)
    }

    @Test func smallValuesAreExact() {
        var histogram = LatencyHistogram()
        for value in 1...100 { histogram.record(UInt64(value)) }
        #expect(histogram.value(atQuantile: 0.5) == 50)
        #expect(histogram.value(atQuantile: 0.99) == 99)
        #expect(histogram.value(atQuantile: 1) == 100)
        #expect(histogram.min == 1)
        #expect(histogram.max == 100)
        #expect(histogram.mean == 50.5)
    }

    @Test func bucketsCoverEveryValueWithoutGaps() {
        var previousUpper: UInt64?
        for index in 0..<LatencyHistogram.bucketCount {
            let range = LatencyHistogram.valueRange(ofBucket: index)
            if let previousUpper { #expect(range.lowerBound == previousUpper + 1, "bucket \(index)") }
            #expect(LatencyHistogram.bucketIndex(of: range.lowerBound) == index)
            #expect(LatencyHistogram.bucketIndex(of: range.upperBound) == index)
            previousUpper = range.upperBound
        }
        #expect(previousUpper == UInt64.max)
    }

    @Test func largeValuesAreWithinOneSixtyFourth() {
        var histogram = LatencyHistogram()
        let values: [UInt64] = [1_000, 123_456, 9_999_999, 1_000_000_007, 1 << 62 + 12_345]
        for value in values {
            histogram = LatencyHistogram()
            histogram.record(value)
            histogram.record(UInt64.max / 2)
            let reported = histogram.value(atQuantile: 0.5)
            #expect(reported >= value)
            #expect(Double(reported - value) <= Double(value) / 64)
        }
    }

    @Test func percentilesOfAKnownDistribution() {
        var histogram = LatencyHistogram()
        // 990 fast samples around 1 ms, 9 at 20 ms, 1 at 500 ms.
        for index in 0..<990 { histogram.record(1_000_000 + UInt64(index)) }
        for _ in 0..<9 { histogram.record(20_000_000) }
        histogram.record(500_000_000)
        #expect(abs(Double(histogram.value(atQuantile: 0.5)) - 1_000_500) < 1_000_500 / 64)
        #expect(histogram.value(atQuantile: 0.99) < 1_100_000)
        #expect(abs(Double(histogram.value(atQuantile: 0.999)) - 20_000_000) <= 20_000_000 / 64)
        #expect(histogram.value(atQuantile: 1) == 500_000_000)
    }

    @Test func mergeAddsCountsAndExtremes() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        for value in 1...50 { a.record(UInt64(value)) }
        for value in 51...100 { b.record(UInt64(value)) }
        a.merge(b)
        #expect(a.count == 100)
        #expect(a.min == 1)
        #expect(a.max == 100)
        #expect(a.value(atQuantile: 0.5) == 50)
        a.merge(LatencyHistogram())
        #expect(a.count == 100)
    }
}
