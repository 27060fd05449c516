import SwitchboardCore

/// Reads one JSON text (RFC 8259) into a `JSONValue`, bounded: nesting deeper than `maxDepth`,
/// a string that is not UTF-8, a member name given twice or anything after the value is refused,
/// so a hostile body costs at most its length in time and memory (the HTTP server bounds that).
public struct JSONParser {
    /// Why a text is not accepted.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// What was wrong.
        public let reason: String
        /// The byte offset where it was found.
        public let offset: Int
        public var description: String { "\(reason) at byte \(offset)" }
    }

    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0
    /// Where each member's name starts, by its path, when reading a document.
    private var positions: [[String]: Int]?
    private var path: [String] = []

    /// Parses `bytes` as one JSON value and notes where each object member starts, so a reader
    /// can name the line of a value it refuses (a configuration file).
    public static func parseDocument(_ bytes: [UInt8], maxDepth: Int = 32) throws(Failure) -> JSONDocument {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.positions = [:]
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the value") }
        return JSONDocument(value: value, bytes: bytes, positions: parser.positions ?? [:])
    }

    /// Parses `bytes` as one JSON value.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 32) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the value") }
        return value
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(Failure) -> JSONValue {
        for byte in literal.utf8 {
            guard current == byte else { throw failure("expected \(literal)") }
            index += 1
        }
        return value
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        switch current {
        case UInt8(ascii: "{")?: return try object(depth: depth + 1)
        case UInt8(ascii: "[")?: return try array(depth: depth + 1)
        case UInt8(ascii: "\"")?: return .string(try string())
        case UInt8(ascii: "t")?: return try expect("true", .bool(true))
        case UInt8(ascii: "f")?: return try expect("false", .bool(false))
        case UInt8(ascii: "n")?: return try expect("null", .null)
        case let byte? where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
            return try number()
        case nil: throw failure("unexpected end of text")
        default: throw failure("unexpected character")
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        var members: [(String, JSONValue)] = []
        var names = Set<String>()
        try elements(until: UInt8(ascii: "}"), depth: depth) { parser throws(Failure) in
            guard parser.current == UInt8(ascii: "\"") else { throw parser.failure("expected a member name") }
            let nameStart = parser.index
            let name = try parser.string()
            guard names.insert(name).inserted else { throw parser.failure("member \(JSONText.quoted(name)) given twice") }
            parser.skipWhitespace()
            guard parser.current == UInt8(ascii: ":") else { throw parser.failure("expected ':'") }
            parser.index += 1
            parser.skipWhitespace()
            if parser.positions != nil {
                parser.path.append(name)
                parser.positions?[parser.path] = nameStart
            }
            members.append((name, try parser.value(depth: depth)))
            if parser.positions != nil { parser.path.removeLast() }
        }
        return .object(members)
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        var values: [JSONValue] = []
        try elements(until: UInt8(ascii: "]"), depth: depth) { parser throws(Failure) in values.append(try parser.value(depth: depth)) }
        return .array(values)
    }

    /// Reads the elements of the array or object that opens here, each with `element`, separated
    /// by commas, up to `close`.
    private mutating func elements(
        until close: UInt8, depth: Int, _ element: (inout JSONParser) throws(Failure) -> Void
    ) throws(Failure) {
        guard depth <= maxDepth else { throw failure("nested deeper than \(maxDepth)") }
        index += 1
        skipWhitespace()
        if current == close {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case close?:
                index += 1
                return
            default: throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))'")
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        /// Adds the bytes since `run`, which must be UTF-8.
        func flush(_ end: Int, _ parser: JSONParser, into scalars: inout String.UnicodeScalarView) throws(Failure) {
            guard run < end else { return }
            guard let text = String(validating: parser.bytes[run..<end], as: UTF8.self) else {
                throw parser.failure("a string is not UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                try flush(index, self, into: &scalars)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush(index, self, into: &scalars)
                index += 1
                scalars.append(try escape())
                run = index
            case 0..<0x20: throw failure("a control character in a string")
            default: index += 1
            }
        }
        throw failure("a string does not end")
    }

    private mutating func escape() throws(Failure) -> Unicode.Scalar {
        guard let byte = current else { throw failure("an escape does not end") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4()
            switch unit {
            case 0xD800..<0xDC00:
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure("a lone surrogate")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate") }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            case 0xDC00..<0xE000: throw failure("a lone surrogate")
            default: return Unicode.Scalar(unit)!
            }
        default: throw failure("an unknown escape")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw failure("a \\u escape does not end") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        var integral = true
        if current == UInt8(ascii: "-") { index += 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while let byte = parser.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { parser.index += 1 }
            return parser.index - from
        }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw failure("a number needs digits")
        }
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard digits(&self) > 0 else { throw failure("a fraction needs digits") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("an exponent needs digits") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw failure("a number out of range") }
        return .double(value)
    }
}

/// A JSON text read with the place of every object member, for errors that name a line.
public struct JSONDocument: Sendable {
    /// The value read.
    public let value: JSONValue
    private let lineStarts: [Int]
    private let positions: [[String]: Int]

    init(value: JSONValue, bytes: [UInt8], positions: [[String]: Int]) {
        self.value = value
        self.positions = positions
        lineStarts = [0] + bytes.indices.filter { bytes[$0] == 0x0A }.map { $0 + 1 }
    }

    /// The line (from 1) where the member at `path` (names from the top object down) starts.
    public func line(of path: [String]) -> Int? {
        guard let offset = positions[path] else { return nil }
        return lineNumber(at: offset)
    }

    /// The line (from 1) of byte `offset` of `bytes`.
    public static func line(ofOffset offset: Int, in bytes: [UInt8]) -> Int {
        1 + bytes.prefix(offset).lazy.filter { $0 == 0x0A }.count
    }

    private func lineNumber(at offset: Int) -> Int {
        var low = 0, high = lineStarts.count
        while low < high {
            let middle = (low + high) / 2
            if lineStarts[middle] <= offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
