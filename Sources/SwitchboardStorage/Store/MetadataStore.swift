import SwitchboardCore

/// Where metadata lives. A store applies each write atomically with `MetadataRules` and answers
/// only once the result is durable; it numbers changes from one sequence that only grows.
///
/// `InMemoryMetadataStore` and `SQLiteMetadataStore` are the built-in ones; a shared store (for
/// several nodes) implements the same calls.
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
}

/// Why stored metadata cannot be used: the server does not start.
public struct StorageStartupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, naming the file.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
