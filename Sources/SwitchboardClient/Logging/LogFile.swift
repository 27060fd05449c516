import Foundation
import SwitchboardCore

/// The SDK's log file as `RtmLogConfig` describes it: `agora.log` in `filePath` (or `filePath`
/// itself when it ends in `.log`), holding the messages at `level` and above, one line each.
/// When a line would take the file past `fileSizeInKB`, the file becomes `agora.log.1` (replacing
/// the one before) and a new one starts, so at most twice the size is ever on disk.
///
/// Safe to call from any thread: writes are serialized by a lock and each line is one `write`.
/// Files go through `FileHandle` and `FileManager`, the same on every platform the SDK builds for.
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
        /// The open file; nil when it could not be opened again after a rotation.
        var handle: FileHandle?
        var size: Int
    }

    /// The file name in a log folder, as the reference names it.
    static let fileName = "agora.log"

    /// Where and what it writes.
    let settings: Settings
    // FileHandle is used only inside the lock, by one thread at a time.
    private let state: Locked<State>
    private let now: @Sendable () -> Date

    /// Opens (creating its folder and the file as needed) the log `settings` name; nil when it
    /// cannot be opened. `now` stamps each line.
    init?(_ settings: Settings, now: @escaping @Sendable () -> Date = { Date() }) {
        let folder = (settings.path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        guard let handle = Self.open(settings.path) else { return nil }
        let size = (try? handle.seekToEnd()).map { Int($0) } ?? 0
        self.settings = settings
        self.now = now
        state = Locked(State(handle: handle, size: size))
    }

    deinit {
        state.withLock { try? $0.handle?.close() }
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
            guard let handle = state.handle, (try? handle.write(contentsOf: Data(line))) != nil else { return }
            state.size += line.count
        }
    }

    /// Moves the full file aside as `<path>.1` (replacing the one before) and starts an empty one.
    private func rotate(_ state: inout State) {
        try? state.handle?.close()
        let previous = settings.path + ".1"
        try? FileManager.default.removeItem(atPath: previous)
        try? FileManager.default.moveItem(atPath: settings.path, toPath: previous)
        state.handle = Self.open(settings.path)
        state.size = 0
    }

    /// The file at `path` for writing at its end, created (mode 0644) when missing.
    private static func open(_ path: String) -> FileHandle? {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644])
            else { return nil }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
        _ = try? handle.seekToEnd()
        return handle
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
        let (days, millisOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, millis) = millisOfDay < 0 ? (days - 1, millisOfDay + 86_400_000) : (days, millisOfDay)
        let (year, month, dayOfMonth) = civilDate(daysSinceEpoch: day)
        let seconds = millis / 1000
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = millis % 1000
        let fractionText = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(year)-\(two(month))-\(two(dayOfMonth)) "
            + "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(fractionText)"
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`), without the C library's `gmtime_r`.
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = daysSinceEpoch + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
