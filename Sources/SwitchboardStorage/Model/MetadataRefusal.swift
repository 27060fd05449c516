import SwitchboardCore

/// Why `MetadataRules` refuses a whole write, as data: a store that runs the rules elsewhere (a
/// script in a shared store) reports its refusals in these terms, so every store answers with the
/// same code and reason.
public enum MetadataRefusal: Sendable, Hashable {
    /// A major revision was given, but the target has no set.
    case noMetadata(expectedMajorRevision: Int64)
    /// The set's major revision is not the one given.
    case outdatedMajorRevision(stored: Int64, expected: Int64)
    /// A removal of the whole set, but there is none.
    case nothingToRemove
    /// An item the write needs does not exist.
    case noItem(key: String)
    /// An item's revision is not the one given.
    case outdatedItemRevision(key: String, stored: Int64, expected: Int64)
    /// The set would have more items than allowed.
    case tooManyItems(count: Int, limit: Int)
    /// The set would have more bytes than allowed.
    case tooLarge(bytes: Int, limit: Int)
    /// A write under the same lock committed with a later fencing token.
    case staleFence(lockName: String, token: UInt64, committed: UInt64)
    /// A store that checks the lock in its write step (the cluster's, where the locks are too)
    /// found no lock of that name in the channel.
    case noLock(lockName: String)
    /// A store that checks the lock in its write step found it held by another session (or by
    /// none: `holder` empty), or acquired again since the writer's token (`current`).
    case lockNotHeld(lockName: String, holder: UserID, current: UInt64?)

    /// The error a write named `operation` is refused with.
    public func error(operation: String) -> RtmError {
        switch self {
        case .noMetadata(let expected):
            RtmError(
                .storageInvalidMetadataInstance, operation: operation,
                reason: "majorRevision \(expected) was given but there is no metadata")
        case .outdatedMajorRevision(let stored, let expected):
            RtmError(.storageOutdatedRevision, operation: operation, reason: "majorRevision is \(stored), not \(expected)")
        case .nothingToRemove:
            RtmError(.storageInvalidMetadataInstance, operation: operation, reason: "there is no metadata to remove")
        case .noItem(let key):
            RtmError(.storageInvalidMetadataItem, operation: operation, reason: "no item with key '\(key)'")
        case .outdatedItemRevision(let key, let stored, let expected):
            RtmError(
                .storageOutdatedRevision, operation: operation, reason: "item '\(key)' has revision \(stored), not \(expected)")
        case .tooManyItems(let count, let limit):
            RtmError(
                .storageMetadataItemExceedLimitation, operation: operation,
                reason: "the metadata would have \(count) items; at most \(limit)")
        case .tooLarge(let bytes, let limit):
            RtmError(
                .storageMetadataLengthOverflow, operation: operation,
                reason: "the metadata would be \(bytes) bytes; at most \(limit)")
        case .staleFence(let lockName, let token, let committed):
            RtmError(
                .storageLockNotAcquired, operation: operation,
                reason: "fencing token \(token) of the lock '\(lockName)' is stale: a write under token \(committed) came first")
        case .noLock(let lockName):
            RtmError(.storageInvalidLockName, operation: operation, reason: "no lock '\(lockName)' in the channel")
        case .lockNotHeld(let lockName, let holder, let current?):
            RtmError(
                .storageLockNotAcquired, operation: operation,
                reason: "the lock '\(lockName)' was acquired again (token \(current)) by \(holder) since the writer's token")
        case .lockNotHeld(let lockName, let holder, nil):
            RtmError(
                .storageLockNotAcquired, operation: operation,
                reason: holder.isEmpty ? "the lock '\(lockName)' is not held" : "the lock '\(lockName)' is held by \(holder)")
        }
    }
}
