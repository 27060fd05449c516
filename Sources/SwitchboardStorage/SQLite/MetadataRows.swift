import SwitchboardCore
import SwitchboardSQLite

/// Reading and writing sets and items as rows. Runs on the database thread only.
enum MetadataRows {
    /// A target's key columns: app, scope (the channel type's raw value; 3, `.user`, for a user)
    /// and name (the channel name or the user id).
    static func key(_ target: MetadataTarget) -> [SQLiteValue] {
        switch target {
        case .channel(let channel): [.text(channel.app), .integer(Int64(channel.type.rawValue)), .text(channel.name)]
        case .user(let user): [.text(user.app), .integer(Int64(RtmChannelType.user.rawValue)), .text(user.userId)]
        }
    }

    /// The target named by key columns, nil for a scope this version does not know.
    static func target(app: String, scope: Int64, name: String) -> MetadataTarget? {
        guard let type = RtmChannelType(rawValue: Int(scope)) else { return nil }
        switch type {
        case .user: return .user(UserKey(app, name))
        case .message, .stream: return .channel(ChannelKey(app: app, type, name))
        case .none: return nil
        }
    }

    static func load(_ target: MetadataTarget, _ connection: SQLiteConnection) throws -> StoredSet? {
        let key = key(target)
        guard
            let major = try connection.integer(
                "SELECT major_revision FROM metadata_sets WHERE app = ? AND scope = ? AND name = ?", key)
        else { return nil }
        var items: [StoredItem] = []
        try connection.query(
            """
            SELECT key, value, size, revision, update_ts, author, position, expires_at, session
            FROM metadata_items WHERE app = ? AND scope = ? AND name = ? ORDER BY position
            """, key
        ) { row in
            items.append(
                StoredItem(
                    key: row.text(0), value: row.blob(1), size: Int(row.integer(2)), revision: row.integer(3),
                    updateTs: UInt64(clamping: row.integer(4)), author: row.text(5), position: row.integer(6),
                    expiresAt: row.optionalInteger(7).map { UInt64(clamping: $0) },
                    session: row.optionalInteger(8).map { SessionID(UInt64(bitPattern: $0)) }))
        }
        return StoredSet(majorRevision: major, items: items)
    }

    /// Writes the change from `old` to `new`: items whose revision is `revision` are written, keys
    /// no longer in `new` are deleted.
    static func save(
        _ target: MetadataTarget, from old: StoredSet?, to new: StoredSet?, revision: Int64, _ connection: SQLiteConnection
    ) throws {
        let key = key(target)
        guard let new else {
            try connection.run("DELETE FROM metadata_items WHERE app = ? AND scope = ? AND name = ?", key)
            try connection.run("DELETE FROM metadata_sets WHERE app = ? AND scope = ? AND name = ?", key)
            return
        }
        try connection.run(
            "INSERT OR REPLACE INTO metadata_sets (app, scope, name, major_revision) VALUES (?, ?, ?, ?)",
            key + [.integer(new.majorRevision)])
        let kept = Set(new.items.map(\.key))
        for item in old?.items ?? [] where !kept.contains(item.key) {
            try connection.run(
                "DELETE FROM metadata_items WHERE app = ? AND scope = ? AND name = ? AND key = ?", key + [.text(item.key)])
        }
        for item in new.items where item.revision == revision {
            try connection.run(
                """
                INSERT OR REPLACE INTO metadata_items
                (app, scope, name, key, value, size, revision, update_ts, author, position, expires_at, session)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                key + [
                    .text(item.key), .blob(item.value), .integer(Int64(item.size)), .integer(item.revision),
                    .integer(Int64(clamping: item.updateTs)), .text(item.author), .integer(item.position),
                    item.expiresAt.map { .integer(Int64(clamping: $0)) } ?? .null,
                    item.session.map { .integer(Int64(bitPattern: $0.rawValue)) } ?? .null,
                ])
        }
    }

    /// The highest fencing token a write under `lockName` has committed with in `target`'s set.
    static func fence(_ target: MetadataTarget, lockName: String, _ connection: SQLiteConnection) throws -> UInt64? {
        try connection.integer(
            "SELECT token FROM lock_fences WHERE app = ? AND scope = ? AND name = ? AND lock_name = ?",
            key(target) + [.text(lockName)]
        ).map { UInt64(bitPattern: $0) }
    }

    /// Keeps `token` as the highest one of `lockName` in `target`'s set.
    static func saveFence(_ target: MetadataTarget, lockName: String, token: UInt64, _ connection: SQLiteConnection) throws {
        try connection.run(
            "INSERT OR REPLACE INTO lock_fences (app, scope, name, lock_name, token) VALUES (?, ?, ?, ?, ?)",
            key(target) + [.text(lockName), .integer(Int64(bitPattern: token))])
    }

    /// The next revision of the store's one sequence, taken (the caller's transaction keeps it).
    static func nextRevision(_ connection: SQLiteConnection) throws -> Int64 {
        let next = (try connection.integer("SELECT value FROM store_info WHERE name = 'last_revision'") ?? 0) + 1
        try connection.run("INSERT OR REPLACE INTO store_info (name, value) VALUES ('last_revision', ?)", [.integer(next)])
        return next
    }

    /// Removes the items `condition` (an SQL condition on `metadata_items` with `bindings`)
    /// selects and `picks` confirms, one change per target.
    static func remove(
        where condition: String, _ bindings: [SQLiteValue], picks: (StoredItem) -> Bool, _ connection: SQLiteConnection
    ) throws -> [MetadataCommit] {
        var targets: [MetadataTarget] = []
        try connection.query("SELECT DISTINCT app, scope, name FROM metadata_items WHERE \(condition)", bindings) { row in
            if let target = target(app: row.text(0), scope: row.integer(1), name: row.text(2)) { targets.append(target) }
        }
        var commits: [MetadataCommit] = []
        for target in targets {
            guard let current = try load(target, connection) else { continue }
            let revision = try nextRevision(connection)
            let (kept, changed) = MetadataRules.removing(from: current, revision: revision, where: picks)
            guard changed else { continue }
            try save(target, from: current, to: kept, revision: revision, connection)
            commits.append(MetadataCommit(target: target, set: kept, revision: revision))
        }
        return commits
    }
}
