import Foundation
import Glibc
import Synchronization
import SwitchboardCore

/// The SDK's log file as `RtmLogConfig` describes it: `agora.log` in `filePath` (or `filePath`
/// itself when it ends in `.log`), holding the messages at `level` and above, one line each.
/// When a line would take the file past `fileSizeInKB`, the file becomes `agora.log.1` (replacing
/// the one before) and a new one starts, so at most twice the size is ever on disk.
///
/// Safe to call from any thread: writes are serialized by a lock and each line is one `write`.
final class LogFile: Sendable {
    /// What to write and where, read from an `RtmLogConfig`.
    struct Settings: Sendable, Equatable {
        /// The log file.
        var path: String
        /// The size the file never grows past.
        var maxBytes: Int
        /// The least severe level written.
        var level: RtmLogLevel

        /// nil when there is nothing to write: no config, an empty `filePath` or level `none`.
        /// The size is clamped to 128–1024 KB, as the reference does.
        init?(_ config: RtmLogConfig?) {
            guard let config, !config.filePath.isEmpty, config.level != .none else { return nil }
            path = config.filePath.hasSuffix(".log")
                ? config.filePath : (config.filePath as NSString).appendingPathComponent(LogFile.fileName)
            maxBytes = Int(min(max(config.fileSizeInKB, 128), 1024)) * 1024
            level = config.level
        }
    }

    private struct State {
        var fd: Int32
        var size: Int
    }

    /// The file name in a log folder, as the reference names it.
    static let fileName = "agora.log"

    /// Where and what it writes.
    let settings: Settings
    private let state: Mutex<State>
    private let now: @Sendable () -> Date

    /// Opens (creating its folder and the file as needed) the log `settings` name; nil when it
    /// cannot be opened. `now` stamps each line.
    init?(_ settings: Settings, now: @escaping @Sendable () -> Date = { Date() }) {
        let folder = (settings.path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let fd = Self.open(settings.path)
        guard fd >= 0 else { return nil }
        var status = stat()
        let size = fstat(fd, &status) == 0 ? Int(status.st_size) : 0
        self.settings = settings
        self.now = now
        state = Mutex(State(fd: fd, size: size))
    }

    deinit {
        state.withLock { _ = Glibc.close($0.fd) }
    }

    /// Whether messages of `level` are written.
    func accepts(_ level: RtmLogLevel) -> Bool {
        level != .none && level.rawValue >= settings.level.rawValue
    }

    /// Appends `message` at `level` as one stamped line, when the level is written.
    func write(_ level: RtmLogLevel, _ message: @autoclosure () -> String) {
        guard accepts(level) else { return }
        var line = Array("\(Self.stamp(now())) [\(Self.name(level))] \(message())\n".utf8)
        if line.count > settings.maxBytes { line = Array(line.prefix(settings.maxBytes - 1)) + [10] }
        state.withLock { state in
            if state.size + line.count > settings.maxBytes { rotate(&state) }
            let written = line.withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress, $0.count) }
            if written > 0 { state.size += written }
        }
    }

    /// Moves the full file aside as `<path>.1` and starts an empty one.
    private func rotate(_ state: inout State) {
        Glibc.close(state.fd)
        _ = Glibc.rename(settings.path, settings.path + ".1")
        state.fd = Self.open(settings.path)
        state.size = 0
    }

    private static func open(_ path: String) -> Int32 {
        Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    }

    private static func name(_ level: RtmLogLevel) -> String {
        switch level {
        case .none: "NONE"
        case .info: "INFO"
        case .warn: "WARN"
        case .error: "ERROR"
        case .fatal: "FATAL"
        }
    }

    /// "2026-05-01 12:00:00.250" in UTC.
    static func stamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(milliseconds % 1000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)"
    }
}
