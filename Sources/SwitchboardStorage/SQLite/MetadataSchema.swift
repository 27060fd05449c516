import Foundation
import SwitchboardSQLite

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
        VersionedDatabase.open(path: path, migrations: migrations, version: version)
            .mapError { StorageStartupError("metadata database \(path): \($0.reason)") }
    }
}
