import SwitchboardCore

/// Where the lock module keeps its locks, owners, lines of waiters and ttl countdowns.
///
/// The module calls one operation at a time, in order, and publishes the effects each returns in
/// that order, so the store need not think about events or receivers. Every operation is atomic.
/// `InMemoryLockStore` is the built-in one; a shared store (Redis with one script per
/// operation, say) implements the same calls for a cluster. Times are the module clock's wall
/// time (`wallNow`), so a ttl countdown one node starts means the same to every other.
public protocol LockStore: Sendable {
    /// Creates the free lock `name` in `channel`; refuses a name in use, a channel with `maxLocks`
    /// locks or an app with `maxLocksInApp`.
    func setLock(_ name: String, in channel: ChannelKey, ttl: Int, maxLocks: Int, maxLocksInApp: Int)
        async throws(LockRefusal) -> [LockEffect]
    /// Deletes a lock; its owner loses it and its waiters stop waiting.
    func removeLock(_ name: String, in channel: ChannelKey) async throws(LockRefusal) -> [LockEffect]
    /// Gives the lock to `caller` when it is free (or already the caller's); otherwise puts the
    /// caller at the end of its line when `wait`, or refuses.
    func acquireLock(_ name: String, in channel: ChannelKey, by caller: Caller, wait: Bool, now: WallClockTime)
        async throws(LockRefusal) -> (LockAcquisition, [LockEffect])
    /// The caller's session gives the lock back (the next in line gets it), or leaves its line.
    func releaseLock(_ name: String, in channel: ChannelKey, by caller: Caller, now: WallClockTime)
        async throws(LockRefusal) -> [LockEffect]
    /// Takes the lock from its owner when that owner is the user `owner`.
    func revokeLock(_ name: String, in channel: ChannelKey, from owner: UserID, now: WallClockTime)
        async throws(LockRefusal) -> [LockEffect]
    /// Every lock of `channel`, sorted by name.
    func locks(in channel: ChannelKey) async throws(LockRefusal) -> [LockDetail]
    /// Who holds the lock now (nil when free); refuses a lock that does not exist.
    func holder(of name: String, in channel: ChannelKey) async throws(LockRefusal) -> LockHolding?
    /// The session lost its connection: each lock it owns, and each it is given while away,
    /// stays its own for the lock's ttl from now.
    func sessionSuspended(_ session: SessionID, now: WallClockTime) async throws(LockRefusal)
    /// The session is back: its locks stop counting down.
    func sessionResumed(_ session: SessionID) async throws(LockRefusal)
    /// The session ended: it leaves every line, and its locks go to the next in line, with
    /// `lockReleased` (the reference's event, whether it logged out or never came back).
    func sessionEnded(_ session: SessionID, now: WallClockTime) async throws(LockRefusal) -> [LockEffect]
    /// The session left `channel`: it leaves the lines there and releases the locks it owns there.
    func sessionLeft(_ session: SessionID, channel: ChannelKey, now: WallClockTime) async throws(LockRefusal) -> [LockEffect]
    /// Locks whose lost owner's ttl ran out by `now` go to the next in line, with `lockReleased`
    /// (seed 000's ttl: "the lock is released and the users … receive the `lockReleased` event").
    func expire(now: WallClockTime) async throws(LockRefusal) -> [LockEffect]
    /// The locks of `app` (nil: every app), held and waited for.
    func counts(in app: AppID?) async throws(LockRefusal) -> LockCounts

    // MARK: A store shared by several nodes

    /// Connects to what keeps the locks; throws an error naming what failed (the server does
    /// not start). Called once, before any operation.
    func open() async throws
    /// Lets go of what `open` took.
    func close() async
    /// True when every operation's effects are published for every node that shares the store,
    /// numbered per channel in the store's order: the module then tells its sessions what the
    /// relay brings (`DeliverRelayedLocks`), its own operations' included, instead of what each
    /// call returns, so every node tells one channel's effects in one order.
    var publishesEffects: Bool { get }
    /// The change of one channel's locks the store published as `payload`, with the effects for
    /// this node (grants and ended waits of its own sessions; every event); nil when `payload`
    /// is not one.
    func change(publishedAs payload: [UInt8]) -> PublishedLockChange?
    /// The locks of `channel` and the number of the channel's last published change (0 for a
    /// store that does not publish).
    func snapshot(of channel: ChannelKey) async throws(LockRefusal) -> LockSnapshot
    /// Moves what the number `session` of node `node`, which held it, owns and waits for to this
    /// node's session of that number, silently (the session goes on here, connected: its locks
    /// stop counting down). A store of one node holds no other node's sessions: nothing.
    func takeOver(_ session: SessionID, fromNode node: String) async throws(LockRefusal)
}

extension LockStore {
    public func takeOver(_ session: SessionID, fromNode node: String) async throws(LockRefusal) {}
    public func open() async throws {}
    public func close() async {}
    public var publishesEffects: Bool { false }
    public func change(publishedAs payload: [UInt8]) -> PublishedLockChange? { nil }
    public func snapshot(of channel: ChannelKey) async throws(LockRefusal) -> LockSnapshot {
        LockSnapshot(locks: try await locks(in: channel), sequence: 0)
    }
}

/// What one operation of a publishing store did to one channel's locks: the channel's next
/// change number (they follow one another: 1, 2, 3 …) and the effects, in order.
public struct PublishedLockChange: Sendable, Hashable {
    /// The channel whose locks changed.
    public var channel: ChannelKey
    /// The change's number in the channel's order.
    public var sequence: UInt64
    /// What it caused, in order.
    public var effects: [LockEffect]
    /// Creates a change.
    public init(channel: ChannelKey, sequence: UInt64, effects: [LockEffect]) {
        self.channel = channel
        self.sequence = sequence
        self.effects = effects
    }
}

/// A channel's locks as of one of its changes.
public struct LockSnapshot: Sendable, Hashable {
    /// The locks, sorted by name.
    public var locks: [LockDetail]
    /// The number of the last change they include (0: none published, or a store that does not publish).
    public var sequence: UInt64
    /// Creates a snapshot.
    public init(locks: [LockDetail], sequence: UInt64) {
        self.locks = locks
        self.sequence = sequence
    }
}

/// Why a lock operation was refused; the module answers each with the reference's error code.
public enum LockRefusal: Error, Sendable, Hashable {
    /// No lock of that name in that channel (`lockNotExist`).
    case notExist
    /// A lock of that name exists already (`lockAlreadyExist`).
    case alreadyExists
    /// The channel has its maximum of locks (`lockOperationFailed`).
    case tooManyLocks(limit: Int)
    /// The app has its maximum of locks, over all its channels (`lockOperationFailed`).
    case tooManyLocksInApp(limit: Int)
    /// Another user holds it and the caller would not wait (`lockAcquireFailed`).
    case heldByOther(owner: UserID)
    /// The caller (or the named user) does not hold it (`lockNotAcquired`); `owner` is empty when free.
    case notOwner(owner: UserID)
    /// The caller already waits for it (`lockOperationPerforming`).
    case alreadyWaiting
    /// A shared store could not be reached (`lockNotAvailable`) or did not answer in time
    /// (`lockOperationTimeout`: the operation may or may not have been carried out).
    case unavailable(timedOut: Bool, reason: String)
}

/// Who holds a lock now.
public struct LockHolding: Sendable, Hashable {
    /// The owner's session.
    public var session: SessionID
    /// The owner's user id.
    public var userId: UserID
    /// The current acquisition's fencing token.
    public var fencingToken: UInt64
    /// True when the owner is a session of another node sharing the store (`session` is then
    /// that node's number, which means nothing here).
    public var onAnotherNode: Bool
    /// Creates a holding.
    public init(session: SessionID, userId: UserID, fencingToken: UInt64, onAnotherNode: Bool = false) {
        self.session = session
        self.userId = userId
        self.fencingToken = fencingToken
        self.onAnotherNode = onAnotherNode
    }
}

/// Something a store operation caused that people must hear about, in the order it happened.
public enum LockEffect: Sendable, Hashable {
    /// Members of the channel with the lock feature get an event about `detail`.
    case event(ChannelKey, RtmLockEventType, LockDetail)
    /// A waiter was given the lock.
    case granted(SessionID, ChannelKey, lockName: String, fencingToken: UInt64)
    /// A waiter stopped waiting without the lock.
    case waitEnded(SessionID, ChannelKey, lockName: String, LockWaitEnd)
}

/// Why a waiter stopped waiting.
public enum LockWaitEnd: Sendable, Hashable {
    /// The lock was removed.
    case lockRemoved
    /// The waiter left the channel.
    case leftChannel
    /// The waiter called `releaseLock` while waiting.
    case withdrawn
}
