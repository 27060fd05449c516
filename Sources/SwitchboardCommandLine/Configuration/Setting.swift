import Foundation
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTransport

/// A value of a setting, whichever layer gave it.
public enum SettingValue: Sendable, Hashable, CustomStringConvertible {
    case text(String)
    case number(Int)
    case flag(Bool)
    case list([String])

    public var description: String {
        switch self {
        case .text(let text): text
        case .number(let number): String(number)
        case .flag(let flag): flag ? "true" : "false"
        case .list(let list): list.joined(separator: ",")
        }
    }

    /// Whether it is a list with an item.
    var givesItems: Bool { if case .list(let items) = self { !items.isEmpty } else { false } }

    /// The value as the configuration file writes it.
    var json: JSONValue {
        switch self {
        case .text(let text): .string(text)
        case .number(let number): .integer(Int64(number))
        case .flag(let flag): .bool(flag)
        case .list(let list): .array(list.map { .string($0) })
        }
    }
}

/// What a setting holds: how it is read from a flag or variable (text) and from the file (JSON),
/// and what values it takes.
public enum SettingKind: Sendable {
    /// Any non-empty text (a path, a name).
    case text
    /// `HOST:PORT`.
    case address
    /// `HOST:PORT`, or `off` for none.
    case addressOrOff
    /// A whole number in the range.
    case number(ClosedRange<Int>)
    /// On or off: a flag alone on the command line; `1`/`true`/`yes` or `0`/`false`/`no` in a
    /// variable; `true` or `false` in the file.
    case flag
    /// Several texts: the option repeated, a comma-separated variable, an array in the file.
    case list
    /// One of the names.
    case choice([String])
    /// A Redis URL (`redis://…`, `rediss://…`); its password is masked when shown.
    case redisURL
    /// Webhook receivers, as a list: each `http://…` or `https://…`, or `APP=URL` for one app's
    /// events only.
    case webhookReceivers
    /// One app's webhook receivers, as a list: each `http://…` or `https://…`.
    case webhookURLs

    /// Reads `text` (from a flag or a variable); nil with the reason when it does not fit.
    func read(_ text: String) -> Result<SettingValue, SettingProblem> {
        switch self {
        case .flag:
            switch text.lowercased() {
            case "1", "true", "yes", "on": return .success(.flag(true))
            case "0", "false", "no", "off", "": return .success(.flag(false))
            default: return .failure(SettingProblem("takes true or false, not '\(text)'"))
            }
        case .list, .webhookReceivers, .webhookURLs:
            return check(.list(text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }))
        case .number(let range):
            guard let number = Int(text) else { return .failure(SettingProblem("takes a whole number, not '\(text)'")) }
            return check(.number(number))
        default:
            return check(.text(text))
        }
    }

    /// Reads a value of the configuration file.
    func read(_ json: JSONValue) -> Result<SettingValue, SettingProblem> {
        switch (self, json) {
        case (.flag, .bool(let flag)): return .success(.flag(flag))
        case (.flag, _): return .failure(SettingProblem("takes true or false"))
        case (.number, .integer(let number)):
            guard let number = Int(exactly: number) else { return .failure(SettingProblem("is too large")) }
            return check(.number(number))
        case (.number(let range), _): return .failure(SettingProblem("takes a whole number in \(range.lowerBound)…\(range.upperBound)"))
        case (.list, .array(let items)), (.webhookReceivers, .array(let items)), (.webhookURLs, .array(let items)):
            var texts: [String] = []
            for item in items {
                guard case .string(let text) = item else { return .failure(SettingProblem("takes an array of strings")) }
                texts.append(text)
            }
            return check(.list(texts))
        case (.list, _), (.webhookReceivers, _), (.webhookURLs, _): return .failure(SettingProblem("takes an array of strings"))
        case (_, .string(let text)): return check(.text(text))
        case (.choice(let names), _): return .failure(SettingProblem("takes one of \(names.joined(separator: ", ")), as a string"))
        default: return .failure(SettingProblem("takes a string"))
        }
    }

    /// Whether `value` is one this kind takes.
    func check(_ value: SettingValue) -> Result<SettingValue, SettingProblem> {
        switch (self, value) {
        case (.number(let range), .number(let number)):
            guard range.contains(number) else {
                return .failure(SettingProblem("takes \(range.lowerBound)…\(range.upperBound), not \(number)"))
            }
        case (.text, .text(let text)):
            guard !text.isEmpty else { return .failure(SettingProblem("takes a non-empty string")) }
        case (.address, .text(let text)):
            guard HostAndPort(text) != nil else { return .failure(SettingProblem("takes HOST:PORT, not '\(text)'")) }
        case (.addressOrOff, .text(let text)):
            guard text == "off" || HostAndPort(text) != nil else {
                return .failure(SettingProblem("takes HOST:PORT or off, not '\(text)'"))
            }
        case (.choice(let names), .text(let text)):
            guard names.contains(text.lowercased()) else {
                return .failure(SettingProblem("takes \(names.joined(separator: ", ")), not '\(text)'"))
            }
            return .success(.text(text.lowercased()))
        case (.redisURL, .text(let text)):
            guard RedisURL(text) != nil else {
                return .failure(SettingProblem("takes redis://[user:password@]HOST:PORT[/DB] or rediss://…, not '\(text)'"))
            }
        case (.webhookReceivers, .list(let receivers)):
            for text in receivers where WebhookReceiver(text) == nil {
                return .failure(SettingProblem("takes http://… or https://… URLs (or APP=URL), not '\(text)'"))
            }
        case (.webhookURLs, .list(let urls)):
            // The top-level list's reader, without its APP= form: the app is the one the key is under.
            for text in urls where WebhookReceiver(text).map({ $0.app != nil }) ?? true {
                return .failure(SettingProblem("takes http://… or https://… URLs, not '\(text)'"))
            }
        default: break
        }
        return .success(value)
    }

    /// What the help and the default file say the value is.
    var placeholder: String {
        switch self {
        case .text: "VALUE"
        case .address: "HOST:PORT"
        case .addressOrOff: "HOST:PORT"
        case .number: "N"
        case .flag: ""
        case .list: "VALUE"
        case .choice(let names): names.joined(separator: "|")
        case .redisURL, .webhookReceivers, .webhookURLs: "URL"
        }
    }
}

/// One receiver of `webhook-url`: `URL` for every app's events, `APP=URL` for one app's.
struct WebhookReceiver: Equatable {
    /// The app whose events it takes; nil for every app.
    let app: String?
    let url: String

    /// Reads `URL` or `APP=URL` (an `=` before any `/` splits); nil unless the URL is one the
    /// webhooks' HTTP client can post to.
    init?(_ text: String) {
        if let equals = text.firstIndex(of: "="), !text[..<equals].contains("/") {
            app = String(text[..<equals])
            url = String(text[text.index(after: equals)...])
            guard !(app ?? "").isEmpty else { return nil }
        } else {
            app = nil
            url = text
        }
        guard HTTPURL(url) != nil else { return nil }
    }
}

/// Why a value does not fit its setting (the caller names the setting and where it came from).
public struct SettingProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// `HOST:PORT`, split.
public struct HostAndPort: Sendable, Equatable {
    public let host: String
    public let port: Int

    /// Reads `HOST:PORT` (the last colon splits, so an IPv6 host keeps its own).
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else { return nil }
        host = String(text[..<colon])
        self.port = port
    }
}

/// Whether a setting can change while the server runs (on SIGHUP) or only at the next start.
public enum Reload: Sendable, Equatable {
    /// Applied on SIGHUP.
    case live
    /// Applied on SIGHUP while the server runs webhooks (it started with a receiver); otherwise
    /// at the next start, since only a start composes the webhooks module.
    case liveWithWebhooks
    /// Read at start only.
    case restart
}

/// One setting of `switchboard serve`: its option, its environment variable and its key in the
/// configuration file, read with one kind, defaulting to one value.
public struct Setting: Sendable {
    /// The option's name (`"max-frames-per-second"`).
    public let name: String
    /// The key in the configuration file (`"maxFramesPerSecond"`).
    public let key: String
    /// The environment variable (`"SWITCHBOARD_MAX_FRAMES_PER_SECOND"`).
    public let environment: String
    public let kind: SettingKind
    /// The value when no layer gives one; nil for "not set".
    public let defaultValue: SettingValue?
    /// Shown masked (`config show`).
    public let secret: Bool
    public let reload: Reload
    /// What it does.
    public let help: String
    /// What the value is, in the help (`"FILE"`).
    public let placeholder: String

    /// A setting named `name`; its key is `name` in lower camel case and its variable
    /// `SWITCHBOARD_` and `name` in upper snake case, unless given.
    public init(
        _ name: String, _ kind: SettingKind, _ placeholder: String? = nil, default defaultValue: SettingValue? = nil,
        key: String? = nil, secret: Bool = false, reload: Reload = .restart, _ help: String
    ) {
        self.placeholder = placeholder ?? kind.placeholder
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.key = key ?? Self.camelCase(name)
        environment = "SWITCHBOARD_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
        self.secret = secret
        self.reload = reload
        self.help = help
    }

    /// The command-line option, with the variable and the default in its help.
    public var option: OptionSpec {
        let arity: OptionSpec.Arity
        switch kind {
        case .flag: arity = .flag
        case .list, .webhookReceivers, .webhookURLs: arity = .repeatable
        default: arity = .value
        }
        var notes = [environment + (kind.isList ? ", comma-separated" : kind.isFlag ? "=1" : "")]
        if let defaultValue, !kind.isFlag { notes.append("default \(defaultValue)") }
        notes.append("key \"\(key)\"")
        return OptionSpec(name, arity, placeholder, help + "\n(" + notes.joined(separator: "; ") + ")")
    }

    static func camelCase(_ name: String) -> String {
        let words = name.split(separator: "-")
        return words.enumerated().map { index, word in index == 0 ? String(word) : word.prefix(1).uppercased() + word.dropFirst() }
            .joined()
    }
}

extension SettingKind {
    var isList: Bool {
        switch self {
        case .list, .webhookReceivers, .webhookURLs: true
        default: false
        }
    }
    var isFlag: Bool { if case .flag = self { true } else { false } }
}
