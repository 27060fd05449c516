import Foundation

/// The tables of the metadata database, versioned with `PRAGMA user_version`: version N is
/// reached by running `migrations[0..<N]` in order, each in the transaction that sets N.
enum MetadataSchema {
    /// Each step takes the database from version `index` to `index + 1`.
    static let migrations: [String] = [
        // 1: the reference's sets and items, and the store's own facts (the revision sequence).
        """
        CREATE TABLE metadata_sets (
            app TEXT NOT NULL, scope INTEGER NOT NULL, name TEXT NOT NULL,
            major_revision INTEGER NOT NULL,
            PRIMARY KEY (app, scope, name)) WITHOUT ROWID;
        CREATE TABLE metadata_items (
            app TEXT NOT NULL, scope INTEGER NOT NULL, name TEXT NOT NULL, key TEXT NOT NULL,
            value BLOB NOT NULL, size INTEGER NOT NULL, revision INTEGER NOT NULL,
            update_ts INTEGER NOT NULL, author TEXT NOT NULL, position INTEGER NOT NULL,
            PRIMARY KEY (app, scope, name, key)) WITHOUT ROWID;
        CREATE TABLE store_info (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
        """,
        // 2: leased items, removed when their time runs out or their session ends.
        """
        ALTER TABLE metadata_items ADD COLUMN expires_at INTEGER;
        ALTER TABLE metadata_items ADD COLUMN session INTEGER;
        CREATE INDEX metadata_items_expiry ON metadata_items (expires_at) WHERE expires_at IS NOT NULL;
        CREATE INDEX metadata_items_session ON metadata_items (session) WHERE session IS NOT NULL;
        """,
        // 3: per channel set and lock, the highest fencing token a write under the lock committed
        // with (the token as a 64-bit pattern), so a stale owner's write is refused.
        """
        CREATE TABLE lock_fences (
            app TEXT NOT NULL, scope INTEGER NOT NULL, name TEXT NOT NULL, lock_name TEXT NOT NULL,
            token INTEGER NOT NULL,
            PRIMARY KEY (app, scope, name, lock_name)) WITHOUT ROWID;
        """,
    ]

    /// The version this code writes.
    static var currentVersion: Int { migrations.count }

    /// Opens the database at `path`, makes it durable on commit, checks it and brings its schema
    /// to `currentVersion` (or to `version` when given, for tests of the migrations).
    static func open(path: String, version: Int = currentVersion) -> Result<SQLiteConnection, StorageStartupError> {
        func failure(_ reason: String) -> Result<SQLiteConnection, StorageStartupError> {
            .failure(StorageStartupError("metadata database \(path): \(reason)"))
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path)
        } catch {
            return failure("cannot open: \(error)")
        }
        guard !connection.isReadOnly else { return failure("the file is read-only") }
        do {
            // One server per file: the lock is taken by the first read and held until close.
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
            let mode = try connection.text("PRAGMA journal_mode = WAL")
            guard mode?.lowercased() == "wal" else { return failure("cannot use write-ahead logging (journal mode \(mode ?? "?"))") }
            // In WAL mode, FULL syncs the log on every commit: a commit that returned survives a crash.
            try connection.execute("PRAGMA synchronous = FULL")
            let check = try connection.text("PRAGMA quick_check")
            guard check == "ok" else { return failure("the file is damaged: \(check ?? "no answer from the integrity check")") }
            let found = Int(try connection.integer("PRAGMA user_version") ?? 0)
            guard found <= currentVersion else {
                return failure("schema version \(found) is newer than this server's \(currentVersion)")
            }
            for step in found..<max(found, version) {
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
            return failure(error.message)
        } catch {
            return failure("\(error)")
        }
        return .success(connection)
    }
}
