import SwitchboardCore

/// One flat JSON object, keys in insertion order, written on one line.
struct JSONLine {
    private var fields: [String] = []

    mutating func add(_ key: String, _ value: String) { fields.append("\(quote(key)):\(quote(value))") }
    mutating func add(_ key: String, _ value: Int) { fields.append("\(quote(key)):\(value)") }
    mutating func add(_ key: String, _ value: Bool) { fields.append("\(quote(key)):\(value)") }
    mutating func add(_ key: String, _ value: Double, digits: Int = 3) {
        guard value.isFinite else {
            fields.append("\(quote(key)):null")
            return
        }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        fields.append("\(quote(key)):\((value * scale).rounded() / scale)")
    }
    mutating func add(_ key: String, _ value: Int?) {
        if let value { add(key, value) } else { fields.append("\(quote(key)):null") }
    }
    mutating func add(_ key: String, _ value: Double?, digits: Int = 3) {
        if let value { add(key, value, digits: digits) } else { fields.append("\(quote(key)):null") }
    }

    /// Adds the fields of `other` after these.
    mutating func append(_ other: JSONLine) { fields += other.fields }

    var text: String { "{" + fields.joined(separator: ",") + "}" }

    private func quote(_ text: String) -> String { JSONQuoting.quoted(text) }
}
