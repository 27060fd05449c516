import Foundation
import SwitchboardCore
import SwitchboardSQLite

/// Metadata in an SQLite database file: write-ahead logging, `synchronous=FULL`, one server per
/// file. Every write is answered only once it is on disk, so an answered write survives a crash
/// of the process or the machine. The connection runs on a thread of its own (`DatabaseThread`).
public final class SQLiteMetadataStore: MetadataStore {
    /// The database file.
    public let path: String
    private let thread: DatabaseThread

    /// The store in the file `path` (created if missing, with its directory).
    public init(path: String) {
        self.path = path
        thread = DatabaseThread(name: "switchboard-metadata", subject: "the metadata store")
    }

    /// The store in `metadata.sqlite` under `directory`.
    public convenience init(directory: String) {
        self.init(path: URL(fileURLWithPath: directory).appendingPathComponent("metadata.sqlite").path)
    }

    public var location: String { path }

    public func open() async throws(StorageStartupError) {
        try await open(schemaVersion: MetadataSchema.currentVersion)
    }

    /// Opens with the schema at `schemaVersion` (tests of the migrations stop at older versions).
    func open(schemaVersion: Int) async throws(StorageStartupError) {
        let path = path
        // Everything that touches the disk, creating the directory included, runs on the store's thread.
        try await thread.start(alreadyStarted: StorageStartupError("metadata database \(path) was already opened")) {
            let opened = MetadataSchema.open(path: path, version: schemaVersion)
            guard case .success(let connection) = opened, schemaVersion >= 2 else { return opened }
            do {
                try connection.execute("BEGIN IMMEDIATE")
                _ = try MetadataRows.remove(where: "session IS NOT NULL", [], picks: { $0.session != nil }, connection)
                // Fencing tokens are the lock module's, whose locks end with the server: its next
                // run counts them again, and every write of that run is checked against its locks.
                if schemaVersion >= 3 { try connection.execute("DELETE FROM lock_fences") }
                try connection.execute("COMMIT")
            } catch {
                return .failure(
                    StorageStartupError("metadata database \(path): cannot remove what ended with the last run: \(error)"))
            }
            return opened
        }
    }

    public func read(_ target: MetadataTarget) async throws(RtmError) -> StoredSet? {
        try await thread.perform(writes: false, operation: "read") { try MetadataRows.load(target, $0) }
    }

    public func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        try await thread.perform(writes: true, operation: write.operation) { connection in
            let committed = try write.fence.flatMap { try MetadataRows.fence(target, lockName: $0.lockName, connection) }
            let token = try MetadataRules.fence(write, committed: committed)
            let current = try MetadataRows.load(target, connection)
            let revision = try MetadataRows.nextRevision(connection)
            let set = try MetadataRules.apply(write, to: current, revision: revision, limits: limits)
            try MetadataRows.save(target, from: current, to: set, revision: revision, connection)
            if let fence = write.fence, let token {
                try MetadataRows.saveFence(target, lockName: fence.lockName, token: token, connection)
            }
            return MetadataCommit(target: target, set: set, revision: revision)
        }
    }

    public func removeExpired(now: WallClockTime) async throws(RtmError) -> [MetadataCommit] {
        let milliseconds = now.millisecondsSince1970
        return try await thread.perform(writes: true, operation: "expire") { connection in
            try MetadataRows.remove(
                where: "expires_at IS NOT NULL AND expires_at <= ?", [.integer(Int64(clamping: milliseconds))],
                picks: { $0.expiresAt.map { $0 <= milliseconds } ?? false }, connection)
        }
    }

    public func removeItems(of session: SessionID) async throws(RtmError) -> [MetadataCommit] {
        try await thread.perform(writes: true, operation: "sessionClosed") { connection in
            try MetadataRows.remove(
                where: "session = ?", [.integer(Int64(bitPattern: session.rawValue))], picks: { $0.session == session },
                connection)
        }
    }

    public func hasItems() async throws(RtmError) -> Bool {
        try await thread.perform(writes: false, operation: "open") { connection in
            try connection.integer("SELECT EXISTS (SELECT 1 FROM metadata_items)") == 1
        }
    }

    public func sealingMarker() async throws(RtmError) -> [UInt8]? {
        try await thread.perform(writes: false, operation: "open") { connection in
            var marker: [UInt8]?
            try connection.query("SELECT value FROM store_info WHERE name = 'sealing_marker'") { marker = $0.blob(0) }
            return marker
        }
    }

    public func setSealingMarker(_ marker: [UInt8]) async throws(RtmError) {
        try await thread.perform(writes: true, operation: "open") { connection in
            try connection.run("INSERT OR REPLACE INTO store_info (name, value) VALUES ('sealing_marker', ?)", [.blob(marker)])
        }
    }

    public func close() async { await thread.stop() }
}
