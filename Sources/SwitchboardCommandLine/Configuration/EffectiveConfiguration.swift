import Foundation

/// Where a setting's value came from.
public enum SettingSource: Sendable, Hashable, CustomStringConvertible {
    /// The command line (`--name`).
    case flag(String)
    /// An environment variable.
    case environment(String)
    /// The configuration file, at a line when known.
    case file(String, line: Int?)
    /// The setting's default.
    case defaultValue

    public var description: String {
        switch self {
        case .flag(let name): "flag --\(name)"
        case .environment(let variable): "environment \(variable)"
        case .file(let path, let line): "file \(path)\(line.map { ":\($0)" } ?? "")"
        case .defaultValue: "default"
        }
    }
}

/// A mistake in the environment or the combined settings: the command ends with exit code 1.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The configuration `serve` runs with: each setting's value and where it came from, taking the
/// command line first, then the environment, then the file, then the default.
public struct EffectiveConfiguration: Sendable, Equatable {
    /// One setting's value (nil: not set) and its source.
    public struct Entry: Sendable, Equatable {
        public let name: String
        public let value: SettingValue?
        public let source: SettingSource
    }

    /// An app served, and its settings with their sources.
    public struct App: Sendable, Equatable {
        public let id: String
        public let source: SettingSource
        /// Its settings by key (`"certificate"`), with their sources.
        public var settings: [String: Entry]
        /// Its own limits (the file's `apps.<id>.limits`), in `LimitSettings.all`'s order, each
        /// named by the limit's key (`limits.messages.payloadMaxBytes`); the server's for the rest.
        public var limits: [Entry] = []
    }

    /// Every setting, in `ServeSettings.all`'s order.
    public let entries: [Entry]
    /// The apps named; empty serves any app id (development).
    public let apps: [App]
    /// Every limit of `LimitSettings.all`, by its key, from the file or the default.
    public let limits: [Entry]

    /// The value of the setting named `name` (an option name).
    public subscript(name: String) -> SettingValue? { entries.first { $0.name == name }?.value }

    /// The text value of the setting named `name`, when it has one.
    func text(_ name: String) -> String? { if case .text(let text)? = self[name] { text } else { nil } }

    /// The entry of the setting named `name`.
    public func entry(_ name: String) -> Entry? { entries.first { $0.name == name } }

    /// Combines the layers. A flag value that does not fit throws `UsageError`; a variable's, or
    /// a broken rule between settings, `ConfigurationError`.
    public static func resolve(
        _ options: ParsedOptions, environment: [String: String], file: ConfigFile?
    ) throws -> EffectiveConfiguration {
        var entries: [Entry] = []
        for setting in ServeSettings.all {
            entries.append(try resolve(setting, options, environment, file))
        }
        let apps = try resolveApps(options, environment, file)
        let limits = LimitSettings.all.map { setting in
            if let file, let given = file.limits[setting.key] {
                Entry(name: setting.key, value: .number(given.value), source: .file(file.path, line: given.line))
            } else {
                Entry(name: setting.key, value: .number(setting.defaultValue), source: .defaultValue)
            }
        }
        let effective = EffectiveConfiguration(entries: entries, apps: apps, limits: limits)
        let appsWithWebhooks = apps.filter { $0.settings[AppSettings.webhookURLs]?.value?.givesItems ?? false }.map(\.id)
        if let rule = SettingRules.broken({ effective[$0] }, named: { "--\($0)" }, appsWithWebhooks: appsWithWebhooks).first,
            let entry = effective.entry(rule.name)
        {
            // A rule the command line alone broke is a mistake on the command line.
            if case .flag = entry.source { throw UsageError(rule.message) }
            throw ConfigurationError(rule.message + " (\(rule.name) from \(entry.source))")
        }
        return effective
    }

    private static func resolve(
        _ setting: Setting, _ options: ParsedOptions, _ environment: [String: String], _ file: ConfigFile?
    ) throws -> Entry {
        if setting.kind.isFlag, options.flag(setting.name) {
            return Entry(name: setting.name, value: .flag(true), source: .flag(setting.name))
        }
        if let given = options.values[setting.name] {
            let value: SettingValue
            switch setting.kind.isList ? setting.kind.check(.list(given)) : setting.kind.read(given.last ?? "") {
            case .success(let read): value = read
            case .failure(let problem): throw UsageError("--\(setting.name) \(problem)")
            }
            return Entry(name: setting.name, value: value, source: .flag(setting.name))
        }
        if let text = environment[setting.environment], !text.isEmpty {
            switch setting.kind.read(text) {
            case .success(let value): return Entry(name: setting.name, value: value, source: .environment(setting.environment))
            case .failure(let problem): throw ConfigurationError("\(setting.environment) \(problem)")
            }
        }
        if let file, let given = file.values[setting.key] {
            return Entry(name: setting.name, value: given.value, source: .file(file.path, line: given.line))
        }
        return Entry(name: setting.name, value: setting.defaultValue, source: .defaultValue)
    }

    /// The apps come from the first layer that names any; each app's certificate from the first
    /// layer that gives one for it (the flags and the variables pair certificates with ids in
    /// order).
    private static func resolveApps(
        _ options: ParsedOptions, _ environment: [String: String], _ file: ConfigFile?
    ) throws -> [App] {
        func split(_ variable: String) -> [String] {
            (environment[variable] ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        let layered: [(ids: [String], certificates: [String], source: (String) -> SettingSource)] = [
            (options.values["app-id"] ?? [], options.values["app-certificate"] ?? [], { .flag($0) }),
            (split("SWITCHBOARD_APP_ID"), split("SWITCHBOARD_APP_CERTIFICATE"), { .environment($0 == "app-id" ? "SWITCHBOARD_APP_ID" : "SWITCHBOARD_APP_CERTIFICATE") }),
        ]
        for (index, layer) in layered.enumerated() {
            guard layer.certificates.isEmpty || layer.certificates.count == layer.ids.count else {
                let message = "give one app certificate per app id"
                if index == 0 { throw UsageError("give one --app-certificate per --app-id") }
                throw ConfigurationError(message + " (SWITCHBOARD_APP_ID, SWITCHBOARD_APP_CERTIFICATE)")
            }
        }
        var apps: [App] = []
        if let layer = layered.first(where: { !$0.ids.isEmpty }) {
            for (position, id) in layer.ids.enumerated() where !apps.contains(where: { $0.id == id }) {
                apps.append(App(id: id, source: layer.source("app-id"), settings: [:]))
                if position < layer.certificates.count {
                    apps[apps.count - 1].settings["certificate"] = Entry(
                        name: "certificate", value: .text(layer.certificates[position]), source: layer.source("app-certificate"))
                }
            }
        } else if let file {
            apps = file.apps.map { App(id: $0.id, source: .file(file.path, line: $0.line), settings: [:]) }
        }
        // Settings the layers above left out, and the app's own limits, from the file.
        for index in apps.indices {
            guard let fileApp = file?.apps.first(where: { $0.id == apps[index].id }), let file else { continue }
            for (key, given) in fileApp.settings where apps[index].settings[key] == nil {
                apps[index].settings[key] = Entry(name: key, value: given.value, source: .file(file.path, line: given.line))
            }
            apps[index].limits = LimitSettings.all.compactMap { setting in
                fileApp.limits[setting.key].map {
                    Entry(name: setting.key, value: .number($0.value), source: .file(file.path, line: $0.line))
                }
            }
        }
        return apps
    }
}

