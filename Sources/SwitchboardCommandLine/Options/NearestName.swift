/// The known name closest to a mistyped one, by edit distance, for "did you mean" hints.
public enum NearestName {
    /// The name of `names` nearest to `typed`, when it is near enough to be what was meant: at
    /// most a third of the typed length away (and at least 2 edits allowed), or `typed` is a
    /// prefix of it.
    public static func among(_ names: [String], to typed: String) -> String? {
        let typed = typed.lowercased()
        guard !typed.isEmpty else { return nil }
        let allowed = max(2, typed.count / 3)
        let ranked = names.map { (name: $0, distance: distance($0.lowercased(), typed)) }.sorted { $0.distance < $1.distance }
        if let best = ranked.first, best.distance <= allowed { return best.name }
        return names.first { $0.lowercased().hasPrefix(typed) && typed.count >= 3 }
    }

    /// The Levenshtein distance: insertions, deletions and substitutions needed to turn `a` into `b`.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
