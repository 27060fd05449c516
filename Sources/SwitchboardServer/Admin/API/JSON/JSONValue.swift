import SwitchboardCore

/// A JSON value as the server API reads and writes it. Objects keep their members in order (an
/// answer is written in the order it was built); integers that fit 64 bits stay exact.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits an `Int64`.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in order; `JSONParser` refuses a name given twice.
    case object([(String, JSONValue)])

    /// The member `name` of an object; nil for a missing member or another kind of value.
    public subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == name }?.1
    }

    /// The value as JSON text, with no insignificant whitespace.
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .double(let value): out += value.isFinite ? "\(value)" : "null"
        case .string(let value): out += JSONText.quoted(value)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (name, value)) in members.enumerated() {
                if index > 0 { out += "," }
                out += JSONText.quoted(name) + ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        default: false
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue {
    /// An integer answer (counts, revisions, tokens, times), saturated at `Int64.max`.
    static func int<T: BinaryInteger>(_ value: T) -> JSONValue { .integer(Int64(clamping: value)) }
}
