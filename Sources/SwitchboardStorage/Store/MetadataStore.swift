import SwitchboardCore

/// Where metadata lives. A store applies each write atomically with `MetadataRules` and answers
/// only once the result is durable; it numbers the changes of each set from a sequence that only
/// grows and is never reused, not even after the set is removed: one sequence for the whole store
/// (the built-in ones) or one per set.
///
/// `InMemoryMetadataStore` and `SQLiteMetadataStore` are the built-in ones; a store shared by
/// several nodes (cluster mode's Redis store) implements the same calls, and also publishes each
/// change it commits, which other nodes hand back to it (`change(publishedAs:of:)`).
public protocol MetadataStore: Sendable {
    /// Where the data lives, for errors and logs (a file path, or "memory").
    var location: String { get }
    /// Opens the store, migrating its schema, and removes session-bound items left by an earlier
    /// run (no session outlives the server) and the fencing tokens kept for its locks (no lock
    /// outlives the server either). Throws when the data cannot be used.
    func open() async throws(StorageStartupError)
    /// The set of `target`, nil when it has none.
    func read(_ target: MetadataTarget) async throws(RtmError) -> StoredSet?
    /// Applies `write` to the set of `target` atomically, durably; a write under a lock also
    /// passes `MetadataRules.fence` in the same step, and its token is kept with the set.
    func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit
    /// Removes every item whose time to live ran out at `now`.
    func removeExpired(now: WallClockTime) async throws(RtmError) -> [MetadataCommit]
    /// Removes every item bound to `session`.
    func removeItems(of session: SessionID) async throws(RtmError) -> [MetadataCommit]
    /// Whether any item is stored.
    func hasItems() async throws(RtmError) -> Bool
    /// The value sealed at rest that proves which key sealed this store's values, if any.
    func sealingMarker() async throws(RtmError) -> [UInt8]?
    /// Keeps `marker` as the store's sealing marker.
    func setSealingMarker(_ marker: [UInt8]) async throws(RtmError)
    /// Finishes pending work and releases the store.
    func close() async
    /// Whether the store publishes every change it commits (a store shared by several nodes): it
    /// numbers each set's changes one after the other (revision r follows r - 1) and publishes
    /// each, this node's own included, in that order, for the relay to bring to every node.
    var publishesChanges: Bool { get }
    /// The change a node committed to `target`, read from what this store published with it;
    /// nil when `payload` is not such a change.
    func change(publishedAs payload: [UInt8], of target: MetadataTarget) -> MetadataCommit?
    /// The set of `target` as it is now and the revision of its last change, for listeners that
    /// may have missed changes.
    func latestChange(of target: MetadataTarget) async throws(RtmError) -> MetadataCommit
    /// Binds the items bound to the number `session` of node `node`, which held it, to this
    /// node's session of that number, silently (the session goes on here). A store of one node
    /// holds no other node's sessions: nothing.
    func takeOver(_ session: SessionID, fromNode node: String) async throws(RtmError)
}

extension MetadataStore {
    /// A store of one node holds no other node's sessions.
    public func takeOver(_ session: SessionID, fromNode node: String) async throws(RtmError) {}

    /// A store of one node publishes nothing.
    public var publishesChanges: Bool { false }

    /// A store of one node publishes nothing.
    public func change(publishedAs payload: [UInt8], of target: MetadataTarget) -> MetadataCommit? { nil }

    /// The set as `read` gives it, with its own revision (0 when there is none).
    public func latestChange(of target: MetadataTarget) async throws(RtmError) -> MetadataCommit {
        let set = try await read(target)
        return MetadataCommit(target: target, set: set, revision: set?.majorRevision ?? 0)
    }
}

/// Why stored metadata cannot be used: the server does not start.
public struct StorageStartupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, naming the file.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
