/// A pattern of channel names: `*` stands for any run of characters (none included), `?` for
/// any one character, everything else for itself. The empty pattern, like `*`, matches every name.
public struct ChannelPattern: Sendable, Hashable, CustomStringConvertible {
    private let scalars: [Unicode.Scalar]

    /// The pattern `text`.
    public init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// Every name.
    public static let any = ChannelPattern("")

    /// Whether `name` matches, in time linear in the name times the pattern at worst (the usual
    /// greedy walk that goes back to the last `*` only).
    public func matches(_ name: String) -> Bool {
        guard !scalars.isEmpty else { return true }
        let text = Array(name.unicodeScalars)
        var (t, p) = (0, 0)
        var star: (pattern: Int, text: Int)?
        while t < text.count {
            if p < scalars.count && (scalars[p] == "?" || (scalars[p] != "*" && scalars[p] == text[t])) {
                t += 1
                p += 1
            } else if p < scalars.count && scalars[p] == "*" {
                star = (p, t)
                p += 1
            } else if let last = star {
                p = last.pattern + 1
                t = last.text + 1
                star = (last.pattern, last.text + 1)
            } else {
                return false
            }
        }
        while p < scalars.count && scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }

    public var description: String { String(String.UnicodeScalarView(scalars)) }
}
