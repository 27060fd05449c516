import Synchronization
import SwitchboardCore

/// The built-in lock store: a `LockTable` in this process's memory. Locks do not outlive the
/// server, as in the reference, where a lock lives while its channel is in use.
public final class InMemoryLockStore: LockStore {
    private let table = Mutex(LockTable())

    /// An empty store.
    public init() {}

    public func setLock(
        _ name: String, in channel: ChannelKey, ttl: Int, maxLocks: Int, maxLocksInApp: Int
    ) throws(LockRefusal) -> [LockEffect] {
        try table.withLock { table throws(LockRefusal) in
            try table.set(name, in: channel, ttl: ttl, maxLocks: maxLocks, maxLocksInApp: maxLocksInApp)
        }
    }

    public func removeLock(_ name: String, in channel: ChannelKey) throws(LockRefusal) -> [LockEffect] {
        try table.withLock { table throws(LockRefusal) in try table.remove(name, in: channel) }
    }

    public func acquireLock(
        _ name: String, in channel: ChannelKey, by caller: Caller, wait: Bool, now: WallClockTime
    ) throws(LockRefusal) -> (LockAcquisition, [LockEffect]) {
        try table.withLock { table throws(LockRefusal) in try table.acquire(name, in: channel, by: caller, wait: wait, now: now) }
    }

    public func releaseLock(_ name: String, in channel: ChannelKey, by caller: Caller, now: WallClockTime) throws(LockRefusal) -> [LockEffect] {
        try table.withLock { table throws(LockRefusal) in try table.release(name, in: channel, by: caller, now: now) }
    }

    public func revokeLock(_ name: String, in channel: ChannelKey, from owner: UserID, now: WallClockTime) throws(LockRefusal) -> [LockEffect] {
        try table.withLock { table throws(LockRefusal) in try table.revoke(name, in: channel, from: owner, now: now) }
    }

    public func counts(in app: AppID?) -> LockCounts {
        table.withLock { $0.counts(in: app) }
    }

    public func locks(in channel: ChannelKey) -> [LockDetail] {
        table.withLock { $0.locks(in: channel) }
    }

    public func holder(of name: String, in channel: ChannelKey) throws(LockRefusal) -> LockHolding? {
        try table.withLock { table throws(LockRefusal) in try table.holder(of: name, in: channel) }
    }

    public func sessionSuspended(_ session: SessionID, now: WallClockTime) {
        table.withLock { $0.suspend(session, now: now) }
    }

    public func sessionResumed(_ session: SessionID) {
        table.withLock { $0.resume(session) }
    }

    public func sessionEnded(_ session: SessionID, now: WallClockTime) -> [LockEffect] {
        table.withLock { $0.end(session, now: now) }
    }

    public func sessionLeft(_ session: SessionID, channel: ChannelKey, now: WallClockTime) -> [LockEffect] {
        table.withLock { $0.leave(session, channel: channel, now: now) }
    }

    public func expire(now: WallClockTime) -> [LockEffect] {
        table.withLock { $0.expire(now: now) }
    }

    /// How many locks the channels of `app` have.
    public func count(in app: AppID) -> Int {
        table.withLock { $0.count(in: app) }
    }

    /// How many sessions wait for a lock.
    public func lineLength(of name: String, in channel: ChannelKey) -> Int {
        table.withLock { $0.lineLength(of: name, in: channel) }
    }

    /// When a lock's lost owner's ttl runs out; nil while its owner is connected or it is free.
    public func deadline(of name: String, in channel: ChannelKey) -> WallClockTime? {
        table.withLock { $0.deadline(of: name, in: channel) }
    }
}
