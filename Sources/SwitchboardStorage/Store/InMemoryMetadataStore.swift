import Synchronization
import SwitchboardCore

/// A store in memory: everything is gone when the process ends. For tests, and for servers that
/// want metadata only for their lifetime.
public final class InMemoryMetadataStore: MetadataStore {
    /// A lock of a set, whose fencing token writes are checked against.
    private struct FenceKey: Hashable {
        let target: MetadataTarget
        let lockName: String
    }

    private struct State {
        var sets: [MetadataTarget: StoredSet] = [:]
        var lastRevision: Int64 = 0
        var marker: [UInt8]?
        /// The highest fencing token a write under each lock has committed with.
        var fences: [FenceKey: UInt64] = [:]
    }

    private let state = Mutex(State())

    /// An empty store.
    public init() {}

    public var location: String { "memory" }

    public func open() async throws(StorageStartupError) {
        _ = removeMatching { $0.session != nil }
        state.withLock { $0.fences = [:] }
    }

    public func read(_ target: MetadataTarget) async throws(RtmError) -> StoredSet? {
        state.withLock { $0.sets[target] }
    }

    public func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        try state.withLock { state throws(RtmError) -> MetadataCommit in
            let fence = write.fence.map { FenceKey(target: target, lockName: $0.lockName) }
            let token = try MetadataRules.fence(write, committed: fence.flatMap { state.fences[$0] })
            let revision = state.lastRevision + 1
            let set = try MetadataRules.apply(write, to: state.sets[target], revision: revision, limits: limits)
            state.lastRevision = revision
            state.sets[target] = set
            if let fence { state.fences[fence] = token }
            return MetadataCommit(target: target, set: set, revision: revision)
        }
    }

    public func removeExpired(now: WallClockTime) async throws(RtmError) -> [MetadataCommit] {
        removeMatching { $0.expiresAt.map { $0 <= now.millisecondsSince1970 } ?? false }
    }

    public func removeItems(of session: SessionID) async throws(RtmError) -> [MetadataCommit] {
        removeMatching { $0.session == session }
    }

    public func hasItems() async throws(RtmError) -> Bool { state.withLock { !$0.sets.isEmpty } }

    public func sealingMarker() async throws(RtmError) -> [UInt8]? { state.withLock { $0.marker } }

    public func setSealingMarker(_ marker: [UInt8]) async throws(RtmError) { state.withLock { $0.marker = marker } }

    public func close() async {}

    private func removeMatching(_ picks: (StoredItem) -> Bool) -> [MetadataCommit] {
        state.withLock { state in
            var commits: [MetadataCommit] = []
            for (target, set) in state.sets.sorted(by: { $0.value.majorRevision < $1.value.majorRevision }) {
                let (kept, changed) = MetadataRules.removing(from: set, revision: state.lastRevision + 1, where: picks)
                guard changed else { continue }
                state.lastRevision += 1
                state.sets[target] = kept
                commits.append(MetadataCommit(target: target, set: kept, revision: state.lastRevision))
            }
            return commits
        }
    }
}
