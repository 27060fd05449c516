import SwitchboardCore

/// The parameters of one call (a JSON object), read by name with their checks: a missing or
/// mistyped parameter is 400 `invalidParameter` naming it, and so is a parameter the method
/// does not take (`finish()`), so a misspelt option is never silently ignored.
struct APIParameters {
    /// The method, for errors.
    let method: String
    /// Where these parameters sit in the call ("" at the top, "items[2]." inside).
    private let path: String
    private let members: [(String, JSONValue)]
    private var read: Set<String> = []

    /// The parameters of `method` in `value`, which must be an object.
    init(_ value: JSONValue, method: String, path: String = "") throws(APIFailure) {
        guard case .object(let members) = value else {
            throw .invalid(method, path.isEmpty ? "the body must be a JSON object" : "\(path.dropLast()) must be an object")
        }
        self.method = method
        self.path = path
        self.members = members
    }

    /// Refuses parameters nobody read.
    func finish() throws(APIFailure) {
        let unknown = members.map(\.0).filter { !read.contains($0) }
        guard unknown.isEmpty else {
            throw .invalid(method, "\(method) takes no parameter \(unknown.map { path + $0 }.joined(separator: ", "))")
        }
    }

    private mutating func take(_ name: String) -> JSONValue? {
        read.insert(name)
        guard let value = members.first(where: { $0.0 == name })?.1, value != .null else { return nil }
        return value
    }

    private func wrong(_ name: String, _ expected: String) -> APIFailure {
        .invalid(method, "\(path + name) must be \(expected)")
    }

    // MARK: Values

    /// A string parameter, nil when absent.
    mutating func optionalString(_ name: String) throws(APIFailure) -> String? {
        guard let value = take(name) else { return nil }
        guard case .string(let text) = value else { throw wrong(name, "a string") }
        return text
    }

    /// A string parameter that must be given.
    mutating func string(_ name: String) throws(APIFailure) -> String {
        guard let text = try optionalString(name) else { throw .invalid(method, "\(path + name) is missing") }
        return text
    }

    /// A boolean parameter, `fallback` when absent.
    mutating func bool(_ name: String, default fallback: Bool) throws(APIFailure) -> Bool {
        guard let value = take(name) else { return fallback }
        guard case .bool(let flag) = value else { throw wrong(name, "true or false") }
        return flag
    }

    /// An integer parameter within `range`, `fallback` when absent (and required when nil).
    mutating func integer(_ name: String, in range: ClosedRange<Int64>, default fallback: Int64? = nil) throws(APIFailure) -> Int64 {
        guard let number = try optionalInteger(name, in: range) ?? fallback else { throw .invalid(method, "\(path + name) is missing") }
        return number
    }

    /// An integer parameter within `range`, nil when absent.
    mutating func optionalInteger(_ name: String, in range: ClosedRange<Int64>) throws(APIFailure) -> Int64? {
        guard let value = take(name) else { return nil }
        guard case .integer(let number) = value, range.contains(number) else {
            throw wrong(name, "an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// An array parameter of at most `limit` elements; nil when absent.
    mutating func optionalArray(_ name: String, limit: Int) throws(APIFailure) -> [JSONValue]? {
        guard let value = take(name) else { return nil }
        guard case .array(let values) = value else { throw wrong(name, "an array") }
        guard values.count <= limit else { throw .invalid(method, "\(path + name) has \(values.count) elements; at most \(limit)") }
        return values
    }

    /// An array of strings of at most `limit` elements; `[]` when absent.
    mutating func strings(_ name: String, limit: Int) throws(APIFailure) -> [String] {
        try (optionalArray(name, limit: limit) ?? []).map { value throws(APIFailure) in
            guard case .string(let text) = value else { throw wrong(name, "an array of strings") }
            return text
        }
    }

    /// The objects of an array parameter, each as parameters of its own ("name[i].").
    mutating func objects(_ name: String, limit: Int) throws(APIFailure) -> [APIParameters] {
        try (optionalArray(name, limit: limit) ?? []).enumerated().map { offset, value throws(APIFailure) in
            try APIParameters(value, method: method, path: "\(path)\(name)[\(offset)].")
        }
    }

    /// An object parameter as it is; nil when absent.
    mutating func optionalObject(_ name: String) throws(APIFailure) -> JSONValue? {
        guard let value = take(name) else { return nil }
        guard case .object = value else { throw wrong(name, "an object") }
        return value
    }

    /// An object parameter of string values, in order; nil when absent.
    mutating func stringMap(_ name: String) throws(APIFailure) -> [(String, String)]? {
        guard let value = take(name) else { return nil }
        guard case .object(let members) = value else { throw wrong(name, "an object") }
        return try members.map { key, value throws(APIFailure) in
            guard case .string(let text) = value else { throw wrong("\(name).\(key)", "a string") }
            return (key, text)
        }
    }

    // MARK: The vocabulary

    /// `channelType`: one of `allowed` by name ("message", "stream", "user"); `fallback` when absent.
    mutating func channelType(_ allowed: [RtmChannelType], default fallback: RtmChannelType? = nil) throws(APIFailure) -> RtmChannelType {
        guard let type = try optionalChannelType(allowed) ?? fallback else { throw .invalid(method, "\(path)channelType is missing") }
        return type
    }

    /// `channelType`, one of `allowed`, or nil when absent.
    mutating func optionalChannelType(_ allowed: [RtmChannelType]) throws(APIFailure) -> RtmChannelType? {
        guard let name = try optionalString("channelType") else { return nil }
        guard let type = allowed.first(where: { $0.apiName == name }) else {
            throw APIFailure(
                status: 400, .invalidChannelType, operation: method,
                reason: "\(path)channelType must be \(allowed.map { "\"\($0.apiName)\"" }.joined(separator: " or "))")
        }
        return type
    }

    /// `channelType` (message or stream, message when absent) and `channel`.
    mutating func channel() throws(APIFailure) -> ChannelAddress {
        let type = try channelType([.message, .stream], default: .message)
        return ChannelAddress(type, try string("channel"))
    }
}

extension RtmChannelType {
    /// The name the server API gives the type.
    var apiName: String {
        switch self {
        case .none: "none"
        case .message: "message"
        case .stream: "stream"
        case .user: "user"
        }
    }
}
