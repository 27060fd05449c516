import Foundation

/// A log: one line per event, filtered by level, written to standard error unless a sink is given.
///
/// The server has one; each module gets a copy labelled with its name in its `ModuleContext`.
/// Every copy shares the level and the format of the log it came from, so changing them
/// (`setLevel`, `setFormat`: `switchboard serve` on SIGHUP) changes them for every module at once.
/// Lines are plain text (`[info] presence: …`) or JSON objects, one a line (`LogFormat.json`), with
/// the ids in play (`LogIDs`) as fields of their own.
public struct SwitchboardLog: Sendable {
    /// How much to log.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case debug = 0, info, warning, error, none

        /// Reads `debug`, `info`, `warning`/`warn`, `error` or `none`.
        public init?(name: String) {
            switch name.lowercased() {
            case "debug": self = .debug
            case "info": self = .info
            case "warning", "warn": self = .warning
            case "error": self = .error
            case "none", "off": self = .none
            default: return nil
            }
        }

        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            case .none: "none"
            }
        }

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// The level and format every copy of one log shares.
    private final class Settings: Sendable {
        let level: PortableAtomic<Int>
        let format: PortableAtomic<Int>
        init(level: Level, format: LogFormat) {
            self.level = PortableAtomic(level.rawValue)
            self.format = PortableAtomic(format.rawValue)
        }
    }

    private let settings: Settings
    /// The module's name (`"presence"`), empty for the server's own lines.
    public private(set) var module: String = ""
    /// The ids written with every line of this copy.
    public private(set) var ids = LogIDs()
    private let sink: @Sendable (String) -> Void

    /// The lowest level written.
    public var level: Level { Level(rawValue: settings.level.load(ordering: .relaxed)) ?? .info }
    /// How lines are written.
    public var format: LogFormat { LogFormat(rawValue: settings.format.load(ordering: .relaxed)) ?? .text }

    /// A log writing to standard error.
    public init(level: Level = .info, format: LogFormat = .text) {
        self.init(level: level, format: format) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// A log handing its lines to `sink` (for tests).
    public init(level: Level, format: LogFormat = .text, sink: @escaping @Sendable (String) -> Void) {
        settings = Settings(level: level, format: format)
        self.sink = sink
    }

    /// Sets the level of this log and of every copy made from it.
    public func setLevel(_ level: Level) { settings.level.store(level.rawValue, ordering: .relaxed) }

    /// Sets the format of this log and of every copy made from it.
    public func setFormat(_ format: LogFormat) { settings.format.store(format.rawValue, ordering: .relaxed) }

    /// Whether a line at `messageLevel` would be written (to skip building costly lines).
    public func writes(_ messageLevel: Level) -> Bool {
        let level = level
        return messageLevel >= level && level != .none
    }

    /// The same log with every line labelled `name` (the module).
    public func labeled(_ name: String) -> SwitchboardLog {
        var copy = self
        copy.module = name
        return copy
    }

    /// The same log with `ids` written with every line (over the ones it had).
    public func with(_ ids: LogIDs) -> SwitchboardLog {
        var copy = self
        copy.ids = self.ids.merged(with: ids)
        return copy
    }

    /// Writes `message` at `messageLevel` when the log's level lets it through.
    public func callAsFunction(_ messageLevel: Level, _ message: @autoclosure () -> String) {
        guard writes(messageLevel) else { return }
        sink(LogLine(level: messageLevel, module: module, message: message(), ids: ids).text(format))
    }

    /// Writes `message` at `messageLevel` with `lineIDs` (over the log's own ids).
    public func callAsFunction(_ messageLevel: Level, _ message: @autoclosure () -> String, _ lineIDs: LogIDs) {
        guard writes(messageLevel) else { return }
        sink(LogLine(level: messageLevel, module: module, message: message(), ids: ids.merged(with: lineIDs)).text(format))
    }
}

/// How log lines are written.
public enum LogFormat: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// `[info] presence: message (connection=… user=…)`, for people.
    case text
    /// One JSON object a line: `time`, `level`, `module`, `message` and each id in play.
    case json

    /// Reads `text` or `json`.
    public init?(name: String) {
        switch name.lowercased() {
        case "text": self = .text
        case "json": self = .json
        default: return nil
        }
    }

    public var description: String { self == .text ? "text" : "json" }
}

/// The ids a log line is about: which connection, session, app, user and channel, and the
/// request id (trace) a client sent with its request.
public struct LogIDs: Sendable, Hashable {
    public var connection: String?
    public var session: String?
    public var app: String?
    public var user: String?
    public var channel: String?
    /// The request id the client chose (the frame's `"trace"`), so an app's own logs and the
    /// server's meet.
    public var requestId: String?

    /// The ids given; the others absent.
    public init(
        connection: String? = nil, session: String? = nil, app: String? = nil, user: String? = nil,
        channel: String? = nil, requestId: String? = nil
    ) {
        self.connection = connection
        self.session = session
        self.app = app
        self.user = user
        self.channel = channel
        self.requestId = requestId
    }

    /// The caller's app, user and session.
    public init(_ caller: Caller) {
        self.init(session: String(caller.session.rawValue), app: caller.app, user: caller.userId)
    }

    /// These ids with those of `other` over them.
    public func merged(with other: LogIDs) -> LogIDs {
        LogIDs(
            connection: other.connection ?? connection, session: other.session ?? session, app: other.app ?? app,
            user: other.user ?? user, channel: other.channel ?? channel, requestId: other.requestId ?? requestId)
    }

    /// The ids present, by their field names in a JSON line, in a fixed order.
    public var fields: [(name: String, value: String)] {
        [("connection", connection), ("session", session), ("app", app), ("user", user), ("channel", channel), ("requestId", requestId)]
            .compactMap { name, value in value.map { (name, $0) } }
    }
}

/// One line of the log, written as text or JSON.
struct LogLine {
    /// UTC with milliseconds: `2026-12-02T03:16:38.123Z`.
    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    let level: SwitchboardLog.Level
    let module: String
    let message: String
    let ids: LogIDs

    func text(_ format: LogFormat) -> String {
        switch format {
        case .text:
            let fields = ids.fields
            let suffix = fields.isEmpty ? "" : " (" + fields.map { "\($0.name)=\($0.value)" }.joined(separator: " ") + ")"
            return "[\(level)] \(module.isEmpty ? "" : module + ": ")\(message)\(suffix)"
        case .json:
            var members = [
                ("time", Date.now.formatted(Self.timeFormat)),
                ("level", level.description), ("module", module.isEmpty ? "server" : module), ("message", message),
            ]
            members += ids.fields.map { ($0.name, $0.value) }
            return "{" + members.map { JSONQuoting.quoted($0.0) + ":" + JSONQuoting.quoted($0.1) }.joined(separator: ",") + "}"
        }
    }
}

/// JSON string literals, for the lines the server writes by hand (logs, admin answers).
public enum JSONQuoting {
    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
