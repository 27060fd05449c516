import SwitchboardCore

/// The compare-and-set rules of the reference, as one pure function every store runs inside its
/// own atomic step (a transaction, a lock, a script), so that all stores agree.
public enum MetadataRules {
    /// The set after `write` is applied to `current` with revision `revision`, or the error that
    /// refuses the whole write (nothing of it is applied). Nil means the set is gone.
    ///
    /// - `expectedMajorRevision` -1 checks nothing; a positive one must equal the stored set's.
    /// - An item's `expectedRevision` -1 checks nothing; a positive one needs the item to exist
    ///   with exactly that revision.
    /// - `update` and `remove` need every named item to exist; `remove` with no items removes
    ///   the whole set, which must exist.
    /// - Every written item, and the set, get `revision`.
    public static func apply(
        _ write: MetadataWrite, to current: StoredSet?, revision: Int64, limits: Limits
    ) throws(RtmError) -> StoredSet? {
        let operation = write.operation
        if write.expectedMajorRevision != -1 {
            guard let current else {
                throw MetadataRefusal.noMetadata(expectedMajorRevision: write.expectedMajorRevision).error(operation: operation)
            }
            guard current.majorRevision == write.expectedMajorRevision else {
                throw MetadataRefusal.outdatedMajorRevision(stored: current.majorRevision, expected: write.expectedMajorRevision)
                    .error(operation: operation)
            }
        }
        if write.kind == .remove && write.items.isEmpty {
            guard current != nil else { throw MetadataRefusal.nothingToRemove.error(operation: operation) }
            return nil
        }
        var items = current?.items ?? []
        var index = Dictionary(uniqueKeysWithValues: items.enumerated().map { ($1.key, $0) })
        var removed = Set<Int>()
        for (offset, item) in write.items.enumerated() {
            let existing = index[item.key]
            if item.expectedRevision != -1 || write.kind != .set {
                guard let existing else { throw MetadataRefusal.noItem(key: item.key).error(operation: operation) }
                let stored = items[existing].revision
                guard item.expectedRevision == -1 || stored == item.expectedRevision else {
                    throw MetadataRefusal.outdatedItemRevision(key: item.key, stored: stored, expected: item.expectedRevision)
                        .error(operation: operation)
                }
            }
            switch (write.kind, existing) {
            case (.remove, let existing?):
                removed.insert(existing)
            case (_, let existing?):
                items[existing].value = item.value
                items[existing].size = item.size
                items[existing].revision = revision
                items[existing].updateTs = write.updateTs
                items[existing].author = write.author
                items[existing].expiresAt = item.expiresAt
                items[existing].session = item.session
            case (_, nil):
                index[item.key] = items.count
                items.append(
                    StoredItem(
                        key: item.key, value: item.value, size: item.size, revision: revision, updateTs: write.updateTs,
                        author: write.author, position: revision &* 1024 &+ Int64(offset), expiresAt: item.expiresAt,
                        session: item.session))
            }
        }
        if !removed.isEmpty { items = items.enumerated().filter { !removed.contains($0.offset) }.map(\.element) }
        guard !items.isEmpty else { return nil }
        guard items.count <= limits.storage.itemsPerSet else {
            throw MetadataRefusal.tooManyItems(count: items.count, limit: limits.storage.itemsPerSet).error(operation: operation)
        }
        let set = StoredSet(majorRevision: revision, items: items)
        guard set.byteCount <= limits.storage.setMaxBytes else {
            throw MetadataRefusal.tooLarge(bytes: set.byteCount, limit: limits.storage.setMaxBytes).error(operation: operation)
        }
        return set
    }

    /// The token to keep for the lock of `write` once it commits (nil for a write under no lock),
    /// or the error that refuses the whole write: `committed`, the highest token a write under
    /// that lock has committed with in this set, is above the write's. The lock check and the
    /// write are two steps; a writer that lost the lock between them (revoked, expired) and whose
    /// write waited while the next owner wrote must not overwrite that owner's data.
    public static func fence(_ write: MetadataWrite, committed: UInt64?) throws(RtmError) -> UInt64? {
        guard let fence = write.fence else { return nil }
        if let committed, committed > fence.token {
            throw MetadataRefusal.staleFence(lockName: fence.lockName, token: fence.token, committed: committed)
                .error(operation: write.operation)
        }
        return fence.token
    }

    /// The set without the items `expired` picks, with revision `revision`; nil when none is
    /// left. Returns `current` unchanged (and `changed` false) when `expired` picks none.
    public static func removing(
        from current: StoredSet, revision: Int64, where expired: (StoredItem) -> Bool
    ) -> (set: StoredSet?, changed: Bool) {
        let kept = current.items.filter { !expired($0) }
        guard kept.count != current.items.count else { return (current, false) }
        return (kept.isEmpty ? nil : StoredSet(majorRevision: revision, items: kept), true)
    }
}
