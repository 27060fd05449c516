import SwitchboardCore

/// Writes the Prometheus text exposition format 0.0.4: for each family a HELP and a TYPE line,
/// then its samples, each `name{label="value",…} number`.
struct PrometheusText {
    /// The content type of the format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A metric family's type.
    enum Kind: String {
        case counter, gauge, histogram
    }

    private(set) var text = ""

    /// Starts the family `name`.
    mutating func family(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample of the current family.
    mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: UInt64) {
        line(name, labels, String(value))
    }

    /// One sample of the current family.
    mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        line(name, labels, Self.number(value))
    }

    /// A family of one unlabelled sample.
    mutating func single(_ name: String, _ kind: Kind, help: String, _ value: UInt64) {
        family(name, kind, help: help)
        sample(name, [], value)
    }

    /// The samples of one histogram series: cumulative buckets, the sum and the count.
    mutating func histogram(_ name: String, _ labels: [(String, String)], _ histogram: DurationHistogram.Snapshot) {
        var cumulative: UInt64 = 0
        for (bound, count) in zip(DurationHistogram.bounds, histogram.buckets) {
            cumulative += count
            line(name + "_bucket", labels + [("le", Self.number(bound))], String(cumulative))
        }
        line(name + "_bucket", labels + [("le", "+Inf")], String(histogram.count))
        line(name + "_sum", labels, Self.number(histogram.sum))
        line(name + "_count", labels, String(histogram.count))
    }

    private mutating func line(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escapedLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + value + "\n"
    }

    private static func number(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return value.isNaN ? "NaN" : "\(value)"
    }

    private static func escapedHelp(_ help: String) -> String {
        help.replacingAll("\\", with: "\\\\").replacingAll("\n", with: "\\n")
    }

    private static func escapedLabel(_ value: String) -> String {
        escapedHelp(value).replacingAll("\"", with: "\\\"")
    }
}

extension String {
    /// This string with every `target` replaced by `replacement` (no Foundation).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
