#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds which of a fixed set of names some UTF-8 bytes spell, without making a string: how a
/// frame's keys (`FrameKey`) and its most common types (`FrameHead.type`) are read.
///
/// Its tables are small enough to stay in the first-level cache (a few kilobytes for every key of
/// every feature): a name is compared only with the few names of its length whose first byte has
/// the same low five bits.
struct NameMatcher<Value> {
    /// Every name's bytes, one after another, in the order of `entries`.
    private let bytes: [UInt8]
    /// Each name's value and where its bytes start in `bytes`, ordered by byte length, then the
    /// low five bits of the first byte.
    private let entries: [(value: Value, start: UInt16)]
    /// For each length and first byte's low five bits (`length * 32 + byte & 31`), the range of
    /// `entries` to compare with, as its lower and upper bound.
    private let candidates: [(lower: UInt16, upper: UInt16)]
    /// The length of the longest name.
    let longest: Int

    /// A matcher for `names`: each a value and its non-empty spelling.
    init(_ names: [(value: Value, name: String)]) {
        let spelled = names.map { (value: $0.value, utf8: Array($0.name.utf8)) }
        precondition(spelled.allSatisfy { !$0.utf8.isEmpty }, "a name is not empty")
        let sorted = spelled.sorted { ($0.utf8.count, $0.utf8[0] & 31) < ($1.utf8.count, $1.utf8[0] & 31) }
        var bytes: [UInt8] = []
        var entries: [(value: Value, start: UInt16)] = []
        for (value, utf8) in sorted {
            entries.append((value, UInt16(bytes.count)))
            bytes += utf8
        }
        precondition(bytes.count <= Int(UInt16.max) && entries.count < Int(UInt16.max), "names fit 16-bit offsets")
        longest = sorted.map(\.utf8.count).max() ?? 0
        var candidates = Array(repeating: (lower: UInt16(0), upper: UInt16(0)), count: (longest + 1) * 32)
        for (index, entry) in sorted.enumerated() {
            let slot = Self.slot(count: entry.utf8.count, first: entry.utf8[0])
            let range = candidates[slot]
            candidates[slot] = (range.lower == range.upper ? UInt16(index) : range.lower, UInt16(index + 1))
        }
        self.bytes = bytes
        self.entries = entries
        self.candidates = candidates
    }

    @inline(__always)
    private static func slot(count: Int, first: UInt8) -> Int { count &* 32 &+ Int(first & 31) }

    /// The value of the name spelled by `wire`, if any.
    func match(_ wire: UnsafeBufferPointer<UInt8>) -> Value? {
        let count = wire.count
        guard count > 0, count <= longest, let wireStart = wire.baseAddress else { return nil }
        return bytes.withUnsafeBufferPointer { known -> Value? in
            let range = candidates[Self.slot(count: count, first: wireStart.pointee)]
            var index = Int(range.lower)
            while index < Int(range.upper) {
                let entry = entries[index]
                if memcmp(known.baseAddress! + Int(entry.start), wireStart, count) == 0 { return entry.value }
                index += 1
            }
            return nil
        }
    }
}

extension NameMatcher: Sendable where Value: Sendable {}
