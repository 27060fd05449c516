import SwitchboardCore

/// One metadata item as a store keeps it: the value as written to disk (UTF-8, or sealed when
/// encryption at rest is on) with the size of its plaintext, and its lease.
public struct StoredItem: Sendable, Hashable {
    /// The key.
    public var key: String
    /// The value as stored.
    public var value: [UInt8]
    /// Bytes of the plaintext value (what the size limits count).
    public var size: Int
    /// The revision of the write that last changed it.
    public var revision: Int64
    /// When that write happened, if it recorded it; else 0.
    public var updateTs: UInt64
    /// Who wrote it, if the write recorded it; else empty.
    public var author: String
    /// Orders the items of a set by when their key was first set.
    public var position: Int64
    /// When a time-to-live item goes, in milliseconds since 1970.
    public var expiresAt: UInt64?
    /// The session whose end removes the item.
    public var session: SessionID?

    /// Creates an item.
    public init(
        key: String, value: [UInt8], size: Int, revision: Int64, updateTs: UInt64, author: String, position: Int64,
        expiresAt: UInt64? = nil, session: SessionID? = nil
    ) {
        self.key = key
        self.value = value
        self.size = size
        self.revision = revision
        self.updateTs = updateTs
        self.author = author
        self.position = position
        self.expiresAt = expiresAt
        self.session = session
    }
}

/// A set of metadata items as a store keeps it. A set with no items does not exist.
public struct StoredSet: Sendable, Hashable {
    /// The revision of the write that last changed the set.
    public var majorRevision: Int64
    /// The items, ordered by `position`.
    public var items: [StoredItem]

    /// Creates a set.
    public init(majorRevision: Int64, items: [StoredItem]) {
        self.majorRevision = majorRevision
        self.items = items
    }

    /// Bytes counted against the set size limit: every key and plaintext value.
    public var byteCount: Int { items.reduce(0) { $0 + $1.key.utf8.count + $1.size } }
}

/// A validated write, its values ready for disk, which a store applies atomically with
/// `MetadataRules.apply`.
public struct MetadataWrite: Sendable, Hashable {
    /// One item of the write.
    public struct Item: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value as it is to be stored (empty for removals).
        public var value: [UInt8]
        /// Bytes of the plaintext value.
        public var size: Int
        /// -1, or the revision the stored item must have.
        public var expectedRevision: Int64
        /// When the item goes, for a time-to-live lease.
        public var expiresAt: UInt64?
        /// The session whose end removes the item, for a session lease.
        public var session: SessionID?

        /// Creates an item.
        public init(
            key: String, value: [UInt8] = [], size: Int = 0, expectedRevision: Int64 = -1, expiresAt: UInt64? = nil,
            session: SessionID? = nil
        ) {
            self.key = key
            self.value = value
            self.size = size
            self.expectedRevision = expectedRevision
            self.expiresAt = expiresAt
            self.session = session
        }
    }

    /// Set, update or remove.
    public var kind: MetadataWriteKind
    /// The operation name errors report.
    public var operation: String
    /// -1, or the revision the stored set must have.
    public var expectedMajorRevision: Int64
    /// The items; empty in a removal removes the whole set.
    public var items: [Item]
    /// What written items record as `updateTs` (0 when not recorded).
    public var updateTs: UInt64
    /// What written items record as `authorUserId` (empty when not recorded).
    public var author: String
    /// For a channel write made under a lock: the lock and the writer's fencing token.
    public var fence: MetadataFence?

    /// Creates a write.
    public init(
        kind: MetadataWriteKind, operation: String, expectedMajorRevision: Int64 = -1, items: [Item],
        updateTs: UInt64 = 0, author: String = "", fence: MetadataFence? = nil
    ) {
        self.kind = kind
        self.operation = operation
        self.expectedMajorRevision = expectedMajorRevision
        self.items = items
        self.updateTs = updateTs
        self.author = author
        self.fence = fence
    }
}

/// The lock a channel write is made under and the fencing token of the writer's acquisition,
/// as the lock module confirmed it. A store keeps, per set and lock name, the highest token a
/// write has committed with, and refuses a write with a lower one (`MetadataRules.fence`): its
/// writer lost the lock after the check, and a later owner has written since.
public struct MetadataFence: Sendable, Hashable {
    /// The lock's name (in the written channel).
    public var lockName: String
    /// The writer's acquisition's fencing token.
    public var token: UInt64
    /// The writer's session: a store that keeps the locks too (the cluster's) checks in its
    /// write step that this session still holds the lock with `token`.
    public var session: SessionID?

    /// Creates a fence.
    public init(lockName: String, token: UInt64, session: SessionID? = nil) {
        self.lockName = lockName
        self.token = token
        self.session = session
    }
}

/// What a store did to one target: the set as it is now (nil when it is gone) and the revision
/// the change got. A target's revisions only grow and are never reused.
public struct MetadataCommit: Sendable, Hashable {
    /// Whose metadata changed.
    public var target: MetadataTarget
    /// The set now; nil when the change removed it.
    public var set: StoredSet?
    /// The revision of the change.
    public var revision: Int64

    /// Creates a commit.
    public init(target: MetadataTarget, set: StoredSet?, revision: Int64) {
        self.target = target
        self.set = set
        self.revision = revision
    }
}
