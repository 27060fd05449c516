import Foundation
import SwitchboardCore

/// One lock (`AgoraRtmLockDetail`), with the fencing token of its current acquisition.
public final class RtmLockDetail: NSObject, Sendable {
    /// The lock's name.
    public let lockName: String
    /// The owner's user id; empty when nobody holds it.
    public let owner: String
    /// Seconds the lock stays with an owner whose connection is lost (10–300).
    public let ttl: Int32
    /// The current acquisition's fencing token (beyond the reference); 0 when nobody holds it.
    public let fencingToken: UInt64

    /// Creates a detail.
    public init(lockName: String, owner: String, ttl: Int32, fencingToken: UInt64 = 0) {
        self.lockName = lockName
        self.owner = owner
        self.ttl = ttl
        self.fencingToken = fencingToken
    }

    convenience init(_ detail: LockDetail) {
        self.init(lockName: detail.lockName, owner: detail.owner, ttl: Int32(clamping: detail.ttl), fencingToken: detail.fencingToken)
    }
}

/// A lock event of a channel subscribed or joined with the lock feature (`AgoraRtmLockEvent`).
public final class RtmLockEvent: NSObject, Sendable {
    /// `.message` or `.stream`.
    public let channelType: RtmChannelType
    /// Snapshot on joining, or what happened to a lock.
    public let eventType: RtmLockEventType
    /// The channel.
    public let channelName: String
    /// Every lock of the channel for a snapshot; the lock concerned otherwise (for a release,
    /// expiry or removal as it was just before, so its owner is the one who lost it).
    public let lockDetailList: [RtmLockDetail]
    /// Server time of the event, milliseconds since 1970.
    public let timestamp: UInt64

    init(_ event: LockEventDelivery) {
        channelType = event.channel.type
        eventType = event.eventType
        channelName = event.channel.name
        lockDetailList = event.locks.map(RtmLockDetail.init)
        timestamp = event.timestamp
    }
}

/// The answer of `getLocks` (`AgoraRtmGetLocksResponse`).
public final class RtmGetLocksResponse: NSObject, Sendable {
    /// The channel's locks, sorted by name.
    public let lockDetailList: [RtmLockDetail]

    init(_ locks: [LockDetail]) { lockDetailList = locks.map(RtmLockDetail.init) }

    /// The same list (the name the reference's example reads).
    public var locks: [RtmLockDetail] { lockDetailList }
}

/// The completion block of `getLocks` (`AgoraRtmGetLocksBlock`).
public typealias RtmGetLocksBlock = @Sendable (RtmGetLocksResponse?, RtmErrorInfo?) -> Void

/// The answer of `acquireFencedLock` (a Switchboard extension): the reference's common response,
/// plus the lock and the fencing token of this acquisition, to pass with every write made under
/// the lock.
public final class RtmAcquireLockResponse: NSObject, Sendable {
    /// The channel of the lock.
    public let channelName: String
    /// Local time of the response, milliseconds since 1970.
    public let timestamp: UInt64
    /// The lock acquired.
    public let lockName: String
    /// This acquisition's fencing token: it only grows for a lock.
    public let fencingToken: UInt64

    init(_ lock: LockAddress, fencingToken: UInt64) {
        channelName = lock.channel.name
        timestamp = UInt64(Date().timeIntervalSince1970 * 1000)
        lockName = lock.name
        self.fencingToken = fencingToken
    }
}

/// The completion block of `acquireFencedLock`.
public typealias RtmAcquireLockBlock = @Sendable (RtmAcquireLockResponse?, RtmErrorInfo?) -> Void

extension RtmCommonResponse {
    /// The common response of an acquisition (what the reference's `acquireLock` answers).
    convenience init(_ acquired: RtmAcquireLockResponse) {
        self.init(channelName: acquired.channelName, timestamp: acquired.timestamp)
    }
}
