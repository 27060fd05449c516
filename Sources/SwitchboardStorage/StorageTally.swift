import SwitchboardCore

/// What the storage module counts of its writes for the server's metrics: writes committed by
/// kind, revision conflicts, and how long each commit took.
struct StorageTally: Sendable {
    private var histogram = DurationHistogram()
    /// The counts as `StorageStatistics` answers them.
    private(set) var counts = StorageCounts()

    /// The store answered a write of `kind` after `duration`, with `refusal` if it refused it.
    mutating func wrote(_ kind: MetadataWriteKind, after duration: Duration, refusal: RtmErrorCode? = nil) {
        histogram.observe(duration)
        counts.commitLatency = histogram.snapshot
        switch refusal {
        case nil: counts.writes[kind, default: 0] += 1
        case .storageOutdatedRevision?: counts.revisionConflicts += 1
        default: break
        }
    }
}
