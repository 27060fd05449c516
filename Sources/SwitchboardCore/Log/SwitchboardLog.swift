import Foundation

/// A log: one line per event, filtered by level, written to standard error unless a sink is given.
///
/// The server has one; each module gets a copy labelled with its name in its `ModuleContext`.
public struct SwitchboardLog: Sendable {
    /// How much to log.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
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

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// The lowest level written.
    public var level: Level
    /// Written before every message (`"presence: "`), empty for the server's own lines.
    public private(set) var label: String = ""
    private let sink: @Sendable (String) -> Void

    /// A log writing to standard error.
    public init(level: Level = .info) {
        self.level = level
        self.sink = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// A log handing its lines to `sink` (for tests).
    public init(level: Level, sink: @escaping @Sendable (String) -> Void) {
        self.level = level
        self.sink = sink
    }

    /// The same log with every line labelled `name`.
    public func labeled(_ name: String) -> SwitchboardLog {
        var copy = self
        copy.label = name.isEmpty ? "" : name + ": "
        return copy
    }

    /// Writes `message` at `messageLevel` when the log's level lets it through.
    public func callAsFunction(_ messageLevel: Level, _ message: @autoclosure () -> String) {
        guard messageLevel >= level, level != .none else { return }
        sink("[\(messageLevel)] \(label)\(message())")
    }
}
