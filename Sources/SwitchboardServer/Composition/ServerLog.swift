import Foundation
import Synchronization

/// The server's log: one line per event on standard error, filtered by level.
public struct ServerLog: Sendable {
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

    /// Writes `message` at `messageLevel` when the log's level lets it through.
    public func callAsFunction(_ messageLevel: Level, _ message: @autoclosure () -> String) {
        guard messageLevel >= level, level != .none else { return }
        sink("[\(messageLevel)] \(message())")
    }
}
