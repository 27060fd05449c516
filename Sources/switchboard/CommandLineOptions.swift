import Foundation

/// Reads `--name value` and `--flag` options, with an environment variable behind each one.
struct CommandLineOptions {
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    private let environment: [String: String]

    /// Parses `arguments` (without the command name); `flagNames` take no value.
    init(_ arguments: [String], flagNames: Set<String>, environment: [String: String]) throws {
        self.environment = environment
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw UsageError("unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if flagNames.contains(name) {
                flags.insert(name)
            } else if let inlineValue {
                values[name, default: []].append(inlineValue)
            } else {
                index += 1
                guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                values[name, default: []].append(arguments[index])
            }
            index += 1
        }
    }

    /// The last value of `--name`, else the environment variable `variable`.
    func value(_ name: String, env variable: String) -> String? {
        values[name]?.last ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Every value of `--name`, else the comma-separated environment variable.
    func list(_ name: String, env variable: String) -> [String] {
        if let given = values[name] { return given }
        return environment[variable]?.split(separator: ",").map { String($0) } ?? []
    }

    /// Whether `--name` was given, or the environment variable is `1`/`true`.
    func flag(_ name: String, env variable: String) -> Bool {
        flags.contains(name) || ["1", "true", "yes"].contains(environment[variable]?.lowercased() ?? "")
    }

    /// Every option name given on the command line.
    var givenNames: Set<String> { Set(values.keys).union(flags) }
}

/// A mistake on the command line.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
