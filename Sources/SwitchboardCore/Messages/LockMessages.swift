/// Asks the lock module whether `caller` holds the lock `lockName` of `channel` right now. Storage
/// asks before a metadata write that names a lock; a test answers it with a fake.
///
/// Succeeds with the current acquisition's fencing token when the caller's session owns the lock
/// (and, if `fencingToken` is given, when it is still the newest acquisition). Fails with
/// `lockNotAcquired` otherwise, or `lockNotExist` when there is no such lock.
public struct CheckLockHolder: BusRequest {
    public typealias Response = LockHold
    public static let operation = "checkLockHolder"
    /// Who wants to write.
    public var caller: Caller
    /// The channel the lock belongs to.
    public var channel: ChannelKey
    /// The lock's name.
    public var lockName: String
    /// The token the writer got when it acquired the lock, if it passes one.
    public var fencingToken: UInt64?
    /// Creates the check.
    public init(caller: Caller, channel: ChannelKey, lockName: String, fencingToken: UInt64? = nil) {
        self.caller = caller
        self.channel = channel
        self.lockName = lockName
        self.fencingToken = fencingToken
    }
}

/// A lock its checker holds.
public struct LockHold: Sendable, Hashable {
    /// The fencing token of the current acquisition: it only grows for a lock.
    public var fencingToken: UInt64
    /// Creates the answer.
    public init(fencingToken: UInt64) { self.fencingToken = fencingToken }
}
