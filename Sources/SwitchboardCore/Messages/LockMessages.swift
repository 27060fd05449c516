/// Asks the lock module whether `caller` holds the lock `lockName` of `channel` right now. Storage
/// asks before a metadata write that names a lock; a test answers it with a fake.
///
/// Succeeds with the current acquisition's fencing token when the caller's session owns the lock
/// (and, if `fencingToken` is given, when it is still the newest acquisition). Fails with
/// `lockNotAcquired` otherwise, or `lockNotExist` when there is no such lock.
public struct CheckLockHolder: BusRequest {
    public typealias Response = LockHold
    public static let operation = OperationName.Lock.checkLockHolder.rawValue
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

/// A lock as a client names it: its channel (message or stream) and its name, within the app the
/// client logged in to.
public struct LockAddress: Hashable, Sendable, CustomStringConvertible {
    /// The channel the lock belongs to.
    public var channel: ChannelAddress
    /// The lock's name.
    public var name: String
    /// Creates an address.
    public init(_ channel: ChannelAddress, _ name: String) {
        self.channel = channel
        self.name = name
    }
    /// Creates the address of lock `name` in channel `channelName` of type `channelType`.
    public init(_ channelType: RtmChannelType, _ channelName: String, _ name: String) {
        self.init(ChannelAddress(channelType, channelName), name)
    }
    public var description: String { "\(name)@\(channel)" }
}

/// Create a lock in a message or stream channel of the caller's app.
public struct SetLock: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Lock.setLock.rawValue
    public var caller: Caller
    public var lock: LockAddress
    /// Seconds the lock stays with an owner whose connection is lost (`limits.locks.ttlRange`);
    /// nil for `limits.locks.defaultTTL`.
    public var ttl: Int?
    /// Creates the request.
    public init(caller: Caller, lock: LockAddress, ttl: Int? = nil) {
        self.caller = caller
        self.lock = lock
        self.ttl = ttl
    }
}

/// Delete a lock, whoever holds it; its waiters stop waiting.
public struct RemoveLock: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Lock.removeLock.rawValue
    public var caller: Caller
    public var lock: LockAddress
    /// Creates the request.
    public init(caller: Caller, lock: LockAddress) {
        self.caller = caller
        self.lock = lock
    }
}

/// Take a lock for the caller's session; with `retry`, wait in line while another holds it.
public struct AcquireLock: BusRequest {
    public typealias Response = LockAcquisition
    public static let operation = OperationName.Lock.acquireLock.rawValue
    public var caller: Caller
    public var lock: LockAddress
    /// Wait, first come first served, when the lock is held (the answer is then `queued`).
    public var retry: Bool
    /// Creates the request.
    public init(caller: Caller, lock: LockAddress, retry: Bool) {
        self.caller = caller
        self.lock = lock
        self.retry = retry
    }
}

/// What an acquire achieved at once.
public enum LockAcquisition: Sendable, Hashable {
    /// The caller owns the lock; the token of this acquisition.
    case acquired(fencingToken: UInt64)
    /// The caller waits in line; a `LockPush.granted` (or `.waitFailed`) follows.
    case queued
}

/// Give back a lock the caller's session owns, or withdraw its place in the lock's line.
public struct ReleaseLock: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Lock.releaseLock.rawValue
    public var caller: Caller
    public var lock: LockAddress
    /// Creates the request.
    public init(caller: Caller, lock: LockAddress) {
        self.caller = caller
        self.lock = lock
    }
}

/// Take a lock away from the user `userId`, who owns it now.
public struct RevokeLock: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Lock.revokeLock.rawValue
    public var caller: Caller
    public var lock: LockAddress
    /// The owner to take it from.
    public var userId: UserID
    /// Creates the request.
    public init(caller: Caller, lock: LockAddress, userId: UserID) {
        self.caller = caller
        self.lock = lock
        self.userId = userId
    }
}

/// The locks of a channel, sorted by name.
public struct GetLocks: BusRequest {
    public typealias Response = [LockDetail]
    public static let operation = OperationName.Lock.getLocks.rawValue
    public var caller: Caller
    public var channel: ChannelAddress
    /// Creates the query.
    public init(caller: Caller, channel: ChannelAddress) {
        self.caller = caller
        self.channel = channel
    }
}

/// One lock as clients see it (`AgoraRtmLockDetail`, plus the fencing token).
public struct LockDetail: Sendable, Hashable {
    /// The lock's name.
    public var lockName: String
    /// The owner's user id; empty when nobody holds it.
    public var owner: UserID
    /// Seconds it stays with an owner whose connection is lost.
    public var ttl: Int
    /// The current acquisition's fencing token; 0 when nobody holds it.
    public var fencingToken: UInt64
    /// Creates a detail.
    public init(lockName: String, owner: UserID, ttl: Int, fencingToken: UInt64) {
        self.lockName = lockName
        self.owner = owner
        self.ttl = ttl
        self.fencingToken = fencingToken
    }

    /// Bytes counted against the resume buffer.
    var approximateSize: Int { lockName.utf8.count + owner.utf8.count + 24 }
}

/// Pushes of the lock family.
public enum LockPush: Sendable, Hashable {
    /// To members with the lock feature: a lock changed, or the snapshot on joining.
    case event(LockEventDelivery)
    /// To a waiter: it owns the lock now, with this fencing token.
    case granted(LockAddress, fencingToken: UInt64)
    /// To a waiter: it stopped waiting without the lock.
    case waitFailed(LockAddress, code: RtmErrorCode, reason: String)

    /// The channel the push is about.
    public var channel: ChannelAddress {
        switch self {
        case .event(let event): event.channel
        case .granted(let lock, _), .waitFailed(let lock, _, _): lock.channel
        }
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int {
        switch self {
        case .event(let event): event.channel.name.utf8.count + event.locks.reduce(32) { $0 + $1.approximateSize }
        case .granted(let lock, _): lock.channel.name.utf8.count + lock.name.utf8.count + 32
        case .waitFailed(let lock, _, let reason): lock.channel.name.utf8.count + lock.name.utf8.count + reason.utf8.count + 32
        }
    }
}

/// A lock event as members receive it (`AgoraRtmLockEvent`).
public struct LockEventDelivery: Sendable, Hashable {
    /// The channel, message or stream.
    public var channel: ChannelAddress
    public var eventType: RtmLockEventType
    /// Every lock of the channel for a snapshot; the lock concerned otherwise.
    public var locks: [LockDetail]
    /// Server time of the event, milliseconds since 1970.
    public var timestamp: UInt64
    /// Creates an event.
    public init(channel: ChannelAddress, eventType: RtmLockEventType, locks: [LockDetail], timestamp: UInt64) {
        self.channel = channel
        self.eventType = eventType
        self.locks = locks
        self.timestamp = timestamp
    }
}

/// How many locks there are, held and waited for, in one app or every app together: for the
/// server's metrics.
public typealias LockStatistics = Statistics<LockCounts>

/// Locks, counted.
public struct LockCounts: Sendable, Hashable {
    /// Locks that exist.
    public var locks: Int
    /// Of those, the locks someone holds.
    public var held: Int
    /// Sessions waiting in the locks' lines.
    public var waiters: Int
    /// Creates counts.
    public init(locks: Int = 0, held: Int = 0, waiters: Int = 0) {
        self.locks = locks
        self.held = held
        self.waiters = waiters
    }
}

/// What happened to a lock, as the lock module's store did it.
public enum LockChange: String, Sendable, Hashable, CaseIterable {
    /// The lock was set (created, free).
    case set
    /// The lock was removed.
    case removed
    /// A session acquired it (itself, or as the first in line).
    case acquired
    /// Its owner released it, left the channel or ended its session.
    case released
    /// Its lost owner's ttl ran out (clients hear this as `lockReleased`, as in the reference).
    case expired
    /// The server's API took it from its owner (`RevokeLock`).
    case revoked
}

/// A lock changed (published only when someone subscribes to it: the webhooks), in the order the
/// lock module's store made the changes.
public struct LockChanged: BusEvent, Hashable {
    /// The lock's channel.
    public var channel: ChannelKey
    /// What happened.
    public var change: LockChange
    /// The lock: for `released`, `expired` and `revoked`, the owner it had.
    public var lock: LockDetail
    /// Creates the event.
    public init(channel: ChannelKey, change: LockChange, lock: LockDetail) {
        self.channel = channel
        self.change = change
        self.lock = lock
    }
}
