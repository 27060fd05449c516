/// One option a command takes: its name, whether it takes a value, and its line of help.
public struct OptionSpec: Sendable {
    /// How an option is given.
    public enum Arity: Sendable {
        /// `--name` alone.
        case flag
        /// `--name VALUE` (or `--name=VALUE`); the last one given counts.
        case value
        /// `--name VALUE`, as many times as wanted; every value counts.
        case repeatable
    }

    /// The name without its dashes (`"listen"`).
    public let name: String
    /// Whether it takes a value, and how many.
    public let arity: Arity
    /// What the value is, in the help (`"HOST:PORT"`); empty for a flag.
    public let placeholder: String
    /// What it does, in the help.
    public let help: String

    /// An option named `name`.
    public init(_ name: String, _ arity: Arity, _ placeholder: String, _ help: String) {
        self.name = name
        self.arity = arity
        self.placeholder = placeholder
        self.help = help
    }
}

/// A command's options, declared once: the table parses the command line (refusing an option it
/// does not know, or one without its value, with the nearest known name) and writes `--help`.
public struct OptionTable: Sendable {
    /// The command as typed (`"switchboard serve"`).
    public let command: String
    /// What follows the command in the synopsis (`"[options]"`, `"CHANNEL TEXT [options]"`).
    public let synopsis: String
    /// The options; `--help` is added to every table.
    public let options: [OptionSpec]
    /// Lines printed after the options.
    public let footer: String
    /// Largest number of arguments that are not options (`nil`: any).
    public let maxArguments: Int?

    /// A table for `command`.
    public init(command: String, synopsis: String = "[options]", options: [OptionSpec], footer: String = "", maxArguments: Int? = 0) {
        self.command = command
        self.synopsis = synopsis
        self.options = options + [OptionSpec("help", .flag, "", "print this help")]
        self.footer = footer
        self.maxArguments = maxArguments
    }

    /// The option named `name`.
    public func option(_ name: String) -> OptionSpec? { options.first { $0.name == name } }

    /// Reads `arguments` (those after the command): `--name VALUE`, `--name=VALUE`, `--flag`,
    /// `-h`; `--` ends the options. Throws `UsageError` naming an unknown option (with the
    /// nearest known one), a missing value, a value given to a flag, or an extra argument.
    public func parse(_ arguments: [String]) throws(UsageError) -> ParsedOptions {
        var parsed = ParsedOptions()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                parsed.arguments.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" {
                parsed.flags.insert("help")
                continue
            }
            var name = String(argument.drop { $0 == "-" })
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = option(name) else { throw unknownOption(argument.prefix { $0 != "=" }, name) }
            switch spec.arity {
            case .flag:
                guard inline == nil else { throw UsageError("--\(name) takes no value") }
                parsed.flags.insert(name)
            case .value, .repeatable:
                let value: String
                if let inline {
                    value = inline
                } else {
                    // The next word, unless it is missing or one of this command's options.
                    guard index < arguments.count, !namesKnownOption(arguments[index]) else {
                        throw UsageError("--\(name) needs a value (\(spec.placeholder)); see '\(command) --help'")
                    }
                    value = arguments[index]
                    index += 1
                }
                parsed.values[name, default: []].append(value)
            }
        }
        if let maxArguments, parsed.arguments.count > maxArguments, !parsed.flags.contains("help") {
            throw UsageError("unexpected argument '\(parsed.arguments[maxArguments])' for '\(command)'; see '\(command) --help'")
        }
        return parsed
    }

    private func namesKnownOption(_ word: String) -> Bool {
        guard word.hasPrefix("--") else { return false }
        return option(String(word.dropFirst(2).prefix { $0 != "=" })) != nil
    }

    private func unknownOption(_ typed: Substring, _ name: String) -> UsageError {
        let suggestion = NearestName.among(options.map(\.name), to: name).map { "; did you mean --\($0)?" }
        return UsageError(
            "unknown option '\(typed)' for '\(command)'" + (suggestion ?? "; see '\(command) --help' for its options"))
    }

    /// The help text: synopsis, then one entry per option, then the footer.
    public var help: String {
        var lines = ["usage: \(command) \(synopsis)"]
        for spec in options {
            let head = "  --\(spec.name)" + (spec.placeholder.isEmpty ? "" : " \(spec.placeholder)")
            let helpLines = spec.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if head.count < 28 {
                lines.append(head.padding(toLength: 28, withPad: " ", startingAt: 0) + helpLines[0])
            } else {
                lines.append(head)
                lines.append(String(repeating: " ", count: 28) + helpLines[0])
            }
            lines += helpLines.dropFirst().map { String(repeating: " ", count: 28) + $0 }
        }
        if !footer.isEmpty { lines.append(footer) }
        return lines.joined(separator: "\n")
    }
}

/// What a command line said, by option name.
public struct ParsedOptions: Sendable, Equatable {
    /// Every value given to each option, in order.
    public var values: [String: [String]] = [:]
    /// The flags given.
    public var flags: Set<String> = []
    /// The words that are not options, in order.
    public var arguments: [String] = []

    /// The last value of `--name`.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// Whether `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Whether `--help` (or `-h`) was given.
    public var wantsHelp: Bool { flags.contains("help") }
}

/// A mistake on the command line: the command ends with exit code 2.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public let description: String
    /// A mistake described by `description`.
    public init(_ description: String) { self.description = description }
}
