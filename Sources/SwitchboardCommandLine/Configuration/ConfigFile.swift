import Foundation
import SwitchboardServer

/// A mistake in a configuration file, naming the key and, where known, the line.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public let path: String
    /// The line (from 1), when known.
    public let line: Int?
    /// The key (`"maxFramesPerSecond"`, `"apps.demo.certificate"`), empty for the whole file.
    public let key: String
    /// What is wrong.
    public let message: String

    public var description: String {
        "\(path)\(line.map { ":\($0)" } ?? ""): " + (key.isEmpty ? "" : "key \"\(key)\" ") + message
    }
}

/// A configuration file that was read and checked: the settings it gives (null ones are left
/// out), and its apps.
///
/// The file is one JSON object. Its keys are the settings' keys (`ServeSettings`), `limits`
/// (`LimitSettings`), `apps` (an object of app ids, each an object of `AppSettings` keys and its
/// own `limits`), and comments: any key that starts
/// with `_` and has a string value (`config default` writes `"_listen": "…"` beside `"listen"`).
/// `null` leaves a setting at its default.
public struct ConfigFile: Sendable {
    /// An app of the file and its settings.
    public struct App: Sendable, Equatable {
        public let id: String
        public let line: Int?
        /// Its settings by key, with their lines.
        public let settings: [String: (value: SettingValue, line: Int?)]
        /// Its own limits, by the limit's key (`limits.messages.payloadMaxBytes`), with their lines.
        public var limits: [String: (value: Int, line: Int?)] = [:]

        public static func == (a: App, b: App) -> Bool {
            a.id == b.id && a.line == b.line && a.settings.mapValues(\.value) == b.settings.mapValues(\.value)
                && a.limits.mapValues(\.value) == b.limits.mapValues(\.value)
        }
    }

    public let path: String
    /// The settings given, by key, with their lines.
    public let values: [String: (value: SettingValue, line: Int?)]
    /// The apps, in the file's order.
    public let apps: [App]
    /// The limits given, by key (`limits.messages.payloadMaxBytes`), with their lines.
    public let limits: [String: (value: Int, line: Int?)]

    /// Reads the file at `path`; throws the file's problems (`ConfigProblems`), or the reason it
    /// cannot be read.
    public static func read(_ path: String) throws -> ConfigFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigProblems([ConfigProblem(path: path, line: nil, key: "", message: "cannot be read")])
        }
        let (file, problems) = check([UInt8](data), path: path)
        guard let file, problems.isEmpty else { throw ConfigProblems(problems) }
        return file
    }

    /// Checks `bytes` as the file at `path`: every problem found, and the file when there is none.
    /// Without `rules`, the rules between settings are left to the layers above (a file meant to
    /// be completed by flags or variables).
    public static func check(_ bytes: [UInt8], path: String, rules: Bool = true) -> (ConfigFile?, [ConfigProblem]) {
        let document: JSONDocument
        do {
            document = try JSONParser.parseDocument(bytes)
        } catch {
            let line = JSONDocument.line(ofOffset: error.offset, in: bytes)
            return (nil, [ConfigProblem(path: path, line: line, key: "", message: "is not JSON: \(error.reason)")])
        }
        var reader = Reader(path: path, document: document)
        guard case .object(let members) = document.value else {
            return (nil, [ConfigProblem(path: path, line: 1, key: "", message: "must be one JSON object")])
        }
        var values: [String: (value: SettingValue, line: Int?)] = [:]
        var apps: [App] = []
        var limits: [String: (value: Int, line: Int?)] = [:]
        let keys = ServeSettings.all.map(\.key) + ["apps", "limits"]
        for (key, json) in members {
            if reader.isComment(key, json, at: [key]) { continue }
            if key == "apps" {
                apps = reader.apps(json)
            } else if key == "limits" {
                limits = reader.limits(json)
            } else if let setting = ServeSettings.all.first(where: { $0.key == key }) {
                if let value = reader.value(json, of: setting.kind, at: [key]) { values[key] = (value, document.line(of: [key])) }
            } else {
                reader.unknown(key, at: [key], known: keys)
            }
        }
        // A range's ends, given or not, must not cross: the server's, and each app's over them.
        limits = reader.uncrossed(limits, over: [:], at: ["limits"])
        let serverWide = limits.mapValues(\.value)
        for index in apps.indices {
            apps[index].limits = reader.uncrossed(apps[index].limits, over: serverWide, at: ["apps", apps[index].id, "limits"])
        }
        let file = ConfigFile(path: path, values: values, apps: apps, limits: limits)
        if rules { reader.problems += SettingRules.problems(in: file) }
        return (reader.problems.isEmpty ? file : nil, reader.problems)
    }

    /// The value of the setting `key`, when the file gives one.
    public subscript(key: String) -> SettingValue? { values[key]?.value }
}

/// Every problem of a file, one a line.
public struct ConfigProblems: Error, Sendable, CustomStringConvertible {
    public let problems: [ConfigProblem]
    init(_ problems: [ConfigProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Walks a file's JSON, noting every problem with its key and line.
private struct Reader {
    let path: String
    let document: JSONDocument
    var problems: [ConfigProblem] = []

    mutating func problem(at keyPath: [String], _ message: String) {
        problems.append(ConfigProblem(path: path, line: document.line(of: keyPath), key: keyPath.joined(separator: "."), message: message))
    }

    /// Whether `key` is a comment (and notes a comment that is not a string).
    mutating func isComment(_ key: String, _ json: JSONValue, at keyPath: [String]) -> Bool {
        guard key.hasPrefix("_") else { return false }
        if case .string = json { return true }
        problem(at: keyPath, "is a comment (it starts with _) and takes a string")
        return true
    }

    mutating func unknown(_ key: String, at keyPath: [String], known: [String]) {
        let hint = NearestName.among(known, to: key).map { "; did you mean \"\($0)\"?" } ?? ""
        problem(at: keyPath, "is not a setting\(hint)")
    }

    /// The value of a setting; nil for `null` or a problem.
    mutating func value(_ json: JSONValue, of kind: SettingKind, at keyPath: [String]) -> SettingValue? {
        if json == .null { return nil }
        switch kind.read(json) {
        case .success(let value): return value
        case .failure(let reason):
            problem(at: keyPath, reason.description)
            return nil
        }
    }

    /// The limits under `keyPath` (`limits`, or an app's `apps.<id>.limits`, which takes only
    /// the limits an app can set: `perApp`), by the limit's key.
    mutating func limits(_ json: JSONValue, at keyPath: [String] = ["limits"], perApp: Bool = false) -> [String: (value: Int, line: Int?)] {
        if json == .null { return [:] }
        guard case .object(let groups) = json else {
            problem(at: keyPath, "takes an object of limit groups (\(LimitSettings.groups.joined(separator: ", ")))")
            return [:]
        }
        var limits: [String: (value: Int, line: Int?)] = [:]
        for (group, members) in groups {
            let groupPath = keyPath + [group]
            if isComment(group, members, at: groupPath) { continue }
            guard LimitSettings.groups.contains(group) else {
                unknown(group, at: groupPath, known: LimitSettings.groups)
                continue
            }
            guard case .object(let entries) = members else {
                problem(at: groupPath, "takes an object of the group's limits")
                continue
            }
            for (name, json) in entries {
                let path = groupPath + [name]
                if isComment(name, json, at: path) { continue }
                guard let setting = LimitSettings.named(group, name) else {
                    unknown(name, at: path, known: LimitSettings.all.filter { $0.group == group }.map(\.name))
                    continue
                }
                guard !perApp || setting.perApp else {
                    problem(at: path, "is server-wide, not per app: set \(setting.key)")
                    continue
                }
                if case .number(let value)? = value(json, of: .number(setting.range), at: path) {
                    limits[setting.key] = (value, document.line(of: path))
                }
            }
        }
        return limits
    }

    /// `limits` (under `keyPath`) without the ends of any range that cross, each noted: a range's
    /// ends come from `limits`, else from `base` (the server's, for an app's), else the default.
    mutating func uncrossed(
        _ limits: [String: (value: Int, line: Int?)], over base: [String: Int], at keyPath: [String]
    ) -> [String: (value: Int, line: Int?)] {
        var limits = limits
        for lower in LimitSettings.all where lower.name.hasSuffix("Min") {
            let upperName = String(lower.name.dropLast(3)) + "Max"
            guard let upper = LimitSettings.named(lower.group, upperName) else { continue }
            guard limits[lower.key] != nil || limits[upper.key] != nil else { continue }
            let low = limits[lower.key]?.value ?? base[lower.key] ?? lower.defaultValue
            let high = limits[upper.key]?.value ?? base[upper.key] ?? upper.defaultValue
            if low > high {
                if limits[lower.key] != nil {
                    problem(at: keyPath + [lower.group, lower.name], "(\(low)) is above \(upper.key) (\(high))")
                } else {
                    problem(at: keyPath + [upper.group, upper.name], "(\(high)) is below \(lower.key) (\(low))")
                }
                limits[lower.key] = nil
                limits[upper.key] = nil
            }
        }
        return limits
    }

    mutating func apps(_ json: JSONValue) -> [ConfigFile.App] {
        if json == .null { return [] }
        guard case .object(let members) = json else {
            problem(at: ["apps"], "takes an object of app ids, each with its settings")
            return []
        }
        var apps: [ConfigFile.App] = []
        for (id, settings) in members {
            let keyPath = ["apps", id]
            if isComment(id, settings, at: keyPath) { continue }
            guard !id.isEmpty, id.utf8.count <= 64 else {
                problem(at: keyPath, "is not an app id (1 to 64 bytes)")
                continue
            }
            guard case .object(let appMembers) = settings else {
                problem(at: keyPath, "takes an object of the app's settings ({} for none)")
                continue
            }
            var values: [String: (value: SettingValue, line: Int?)] = [:]
            var limits: [String: (value: Int, line: Int?)] = [:]
            for (key, json) in appMembers {
                let path = keyPath + [key]
                if isComment(key, json, at: path) { continue }
                if key == AppSettings.limits {
                    limits = self.limits(json, at: path, perApp: true)
                    continue
                }
                guard let setting = AppSettings.all.first(where: { $0.key == key }) else {
                    unknown(key, at: path, known: AppSettings.all.map(\.key) + [AppSettings.limits])
                    continue
                }
                if let value = value(json, of: setting.kind, at: path) { values[key] = (value, document.line(of: path)) }
            }
            apps.append(ConfigFile.App(id: id, line: document.line(of: keyPath), settings: values, limits: limits))
        }
        return apps
    }
}
