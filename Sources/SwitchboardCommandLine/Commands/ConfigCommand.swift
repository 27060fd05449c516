import Foundation
import SwitchboardCore
import SwitchboardServer

/// `switchboard config show|check|default`: the effective configuration with the source of
/// each value, a file's check, and a complete file at the defaults.
public enum ConfigCommand {
    static let usage = """
        usage: switchboard config <show|check|default> [options]
          show [--config FILE] [serve's options]
                       the configuration serve would run with, each value with where it came from
                       (flag, environment, file:line, default); secrets masked
          check FILE   every unknown key, wrong type and out-of-range value of FILE, with its line;
                       exit code 0 when there is none, 1 otherwise
          default      a complete file: every key at its default, each with a "_<key>" comment
        """

    static let checkTable = OptionTable(command: "switchboard config check", synopsis: "FILE", options: [], maxArguments: 1)
    static let defaultTable = OptionTable(command: "switchboard config default", options: [])
    static let showTable = ServeSettings.table(
        command: "switchboard config show", footer: "prints each setting, its value and where the value came from")

    /// Runs `config` with `arguments` (those after `config`); returns what to print. A file
    /// with problems throws `ConfigProblems`.
    public static func run(_ arguments: [String], environment: [String: String]) throws -> String {
        guard let verb = arguments.first else { throw UsageError("config needs show, check or default\n" + usage) }
        let rest = Array(arguments.dropFirst())
        switch verb {
        case "show":
            let options = try showTable.parse(rest)
            if options.wantsHelp { return showTable.help }
            return show(try ConfigurationLayers(options: options, environment: environment).resolve())
        case "check":
            let options = try checkTable.parse(rest)
            if options.wantsHelp { return checkTable.help }
            guard let path = options.arguments.first else { throw UsageError("config check needs a FILE") }
            guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("\(path): cannot be read") }
            let (_, problems) = ConfigFile.check([UInt8](data), path: path)
            guard problems.isEmpty else { throw ConfigProblems(problems) }
            return "\(path): ok"
        case "default":
            let options = try defaultTable.parse(rest)
            if options.wantsHelp { return defaultTable.help }
            return defaultFile()
        case "help", "--help", "-h":
            return usage
        default:
            let hint = NearestName.among(["show", "check", "default"], to: verb).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError("unknown config command '\(verb)'\(hint)\n" + usage)
        }
    }

    /// Each setting, app setting and limit (an app's own after the app), one a line: key, value
    /// (masked when secret), source.
    static func show(_ effective: EffectiveConfiguration) -> String {
        var rows: [(String, String, String)] = [("key", "value", "from")]
        for entry in effective.entries {
            guard let setting = ServeSettings.named(entry.name) else { continue }
            rows.append((setting.key, Masking.shown(entry.value, of: setting.kind, secret: setting.secret), entry.source.description))
        }
        if effective.apps.isEmpty { rows.append(("apps", "(any app id)", SettingSource.defaultValue.description)) }
        for app in effective.apps {
            rows.append(("apps.\(app.id)", "(served)", app.source.description))
            for setting in AppSettings.all {
                let entry = app.settings[setting.key]
                rows.append((
                    "apps.\(app.id).\(setting.key)", Masking.shown(entry?.value, of: setting.kind, secret: setting.secret),
                    entry?.source.description ?? "-"
                ))
            }
            for entry in app.limits { rows.append(("apps.\(app.id).\(entry.name)", entry.value?.description ?? "-", entry.source.description)) }
        }
        for entry in effective.limits { rows.append((entry.name, entry.value?.description ?? "-", entry.source.description)) }
        let keyWidth = rows.map(\.0.count).max() ?? 0
        let valueWidth = min(48, rows.map(\.1.count).max() ?? 0)
        return rows.map { key, value, source in
            key.padding(toLength: keyWidth + 2, withPad: " ", startingAt: 0)
                + (value.count < valueWidth ? value.padding(toLength: valueWidth + 2, withPad: " ", startingAt: 0) : value + "  ")
                + source
        }.joined(separator: "\n")
    }

    /// A complete configuration file at the defaults: each key with a `_<key>` comment before
    /// it; `null` for the settings that are not set by default.
    static func defaultFile() -> String {
        func comment(_ text: String) -> String {
            JSONQuoting.quoted(text.replacingOccurrences(of: "\n", with: " "))
        }
        var lines = [
            "  \"_comment\": " + comment(
                "switchboard serve --config FILE. Keys that start with _ are comments. null leaves a setting unset. Flags, then SWITCHBOARD_* variables, win over this file. docs/CONFIGURATION.md lists every key.")
        ]
        for setting in ServeSettings.all {
            let change = switch setting.reload {
            case .live: "changes on SIGHUP"
            case .liveWithWebhooks: "changes on SIGHUP when the server started with a receiver"
            case .restart: "a change takes a restart"
            }
            lines.append("  \"_\(setting.key)\": " + comment("\(setting.help) (--\(setting.name), \(setting.environment); \(change))"))
            lines.append("  \"\(setting.key)\": " + (setting.defaultValue?.json.text ?? "null"))
        }
        let appKeys = AppSettings.all.map { "\"\($0.key)\": \($0.help)" }.joined(separator: "; ")
        lines.append("  \"_apps\": " + comment("the apps served, by app id, each an object of its settings: {\(appKeys); \"limits\": the app's own limits, by group as in limits below (those marked per app), the server's for the rest; changes on SIGHUP}. Empty: any app id is served (development). On SIGHUP an app added is served and an app removed refuses new logins; a certificate changes on SIGHUP when the server started with one, an app's webhookUrls when it started with a receiver. Example: {\"970CA35de60c44645bbae8a215061b33\": {\"certificate\": \"…\", \"limits\": {\"sessions\": {\"concurrentUsers\": 1000}}}}."))
        lines.append("  \"apps\": {}")
        lines.append("  \"_limits\": " + comment("the server's limits, by group, at the reference's values: every app's, unless it sets its own under apps.<id>.limits (the limits marked per app). A change takes effect on SIGHUP for the requests after it, except those marked restart."))
        let groups = LimitSettings.groups.map { group in
            let members = LimitSettings.all.filter { $0.group == group }.flatMap { limit in
                ["      \"_\(limit.name)\": " + comment("\(limit.help) (\(limit.range.lowerBound)…\(limit.range.upperBound); \(limit.perApp ? "per app" : "server-wide"); \(limit.reload == .live ? "changes on SIGHUP" : "a change takes a restart"))"),
                 "      \"\(limit.name)\": \(limit.defaultValue)"]
            }
            return "    \"\(group)\": {\n" + members.joined(separator: ",\n") + "\n    }"
        }
        lines.append("  \"limits\": {\n" + groups.joined(separator: ",\n") + "\n  }")
        return "{\n" + lines.joined(separator: ",\n") + "\n}"
    }
}
