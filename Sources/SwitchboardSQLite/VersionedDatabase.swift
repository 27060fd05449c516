import Foundation

/// How a server opens a database file of its own: one server per file, write-ahead logging,
/// durable on commit, checked, and its schema brought up to date by numbered migrations.
public enum VersionedDatabase {
    /// Opens the database at `path` (created if missing, with its directory) and brings its schema to `version`
    /// (by default every migration) with `migrations`: version N is reached by running
    /// `migrations[0..<N]` in order, each in the transaction that sets `PRAGMA user_version` to N.
    /// A failure is a reason in words, for the caller to name the file with.
    public static func open(path: String, migrations: [String], version: Int? = nil) -> Result<SQLiteConnection, Failure> {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            return .failure(Failure("cannot create its directory: \(error.localizedDescription)"))
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path)
        } catch {
            return .failure(Failure("cannot open: \(error)"))
        }
        guard !connection.isReadOnly else { return .failure(Failure("the file is read-only")) }
        let currentVersion = migrations.count
        do {
            // One server per file: the lock is taken by the first read and held until close.
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
            let mode = try connection.text("PRAGMA journal_mode = WAL")
            guard mode?.lowercased() == "wal" else {
                return .failure(Failure("cannot use write-ahead logging (journal mode \(mode ?? "?"))"))
            }
            // In WAL mode, FULL syncs the log on every commit: a commit that returned survives a crash.
            try connection.execute("PRAGMA synchronous = FULL")
            let check = try connection.text("PRAGMA quick_check")
            guard check == "ok" else {
                return .failure(Failure("the file is damaged: \(check ?? "no answer from the integrity check")"))
            }
            let found = Int(try connection.integer("PRAGMA user_version") ?? 0)
            guard found <= currentVersion else {
                return .failure(Failure("schema version \(found) is newer than this server's \(currentVersion)"))
            }
            for step in found..<max(found, version ?? currentVersion) {
                try connection.execute("BEGIN IMMEDIATE")
                do {
                    try connection.execute(migrations[step])
                    try connection.execute("PRAGMA user_version = \(step + 1)")
                    try connection.execute("COMMIT")
                } catch {
                    try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        } catch let error as SQLiteError {
            return .failure(Failure(error.message))
        } catch {
            return .failure(Failure("\(error)"))
        }
        return .success(connection)
    }

    /// Why a database could not be opened, in words (the caller names the file).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public let reason: String
        /// A failure for `reason`.
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }
}
