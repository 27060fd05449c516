import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// A lock module on a manual clock, and the requests and events tests send it.
struct LockWorld {
    let harness: ModuleHarness
    /// The locks (behind `suspending` when the module runs over it).
    let store: InMemoryLockStore
    /// The store the module runs over when it is not `store` itself.
    let suspending: SuspendingLockStore?
    var bus: EventBus { harness.bus }

    /// A lock module over an in-memory store, or (`suspending`) over one that suspends on every call.
    static func start(limits: Limits = Limits(), suspending: Bool = false) async -> LockWorld {
        let store = InMemoryLockStore()
        let seam = suspending ? SuspendingLockStore(store) : nil
        let harness = await ModuleHarness(limits: limits, modules: [Lock(store: seam ?? store)])
        return LockWorld(harness: harness, store: store, suspending: seam)
    }

    func set(_ lock: String, _ channel: String = "room", by caller: Caller, ttl: Int? = nil, type: RtmChannelType = .message) async throws {
        _ = try await bus.request(SetLock(caller: caller, lock: LockAddress(type, channel, lock), ttl: ttl))
    }

    func acquire(_ lock: String, _ channel: String = "room", by caller: Caller, retry: Bool = false) async throws -> LockAcquisition {
        try await bus.request(AcquireLock(caller: caller, lock: LockAddress(.message, channel, lock), retry: retry))
    }

    func release(_ lock: String, _ channel: String = "room", by caller: Caller) async throws {
        _ = try await bus.request(ReleaseLock(caller: caller, lock: LockAddress(.message, channel, lock)))
    }

    func locks(_ channel: String = "room", seenBy caller: Caller, type: RtmChannelType = .message) async throws -> [LockDetail] {
        try await bus.request(GetLocks(caller: caller, channel: ChannelAddress(type, channel)))
    }

    func check(_ lock: String, _ channel: String = "room", by caller: Caller, token: UInt64? = nil) async throws -> LockHold {
        try await bus.request(
            CheckLockHolder(caller: caller, channel: caller.channel(.message, channel), lockName: lock, fencingToken: token))
    }

    func join(_ caller: Caller, _ channel: String = "room", type: RtmChannelType = .message, features: ChannelFeatures = [.lock]) async {
        await bus.publishAndWait(ChannelJoined(caller: caller, channel: caller.channel(type, channel), features: features))
    }

    func leave(_ caller: Caller, _ channel: String = "room", type: RtmChannelType = .message) async {
        await bus.publishAndWait(ChannelLeft(caller: caller, channel: caller.channel(type, channel), reason: .left))
    }

    /// Every lock push `caller`'s session received, in order.
    func pushes(to caller: Caller) -> [LockPush] {
        harness.outbox.pushes(to: caller.session).compactMap { if case .lock(let push) = $0 { push } else { nil } }
    }

    /// The lock events `caller`'s session received, in order.
    func events(to caller: Caller) -> [LockEventDelivery] {
        pushes(to: caller).compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// The fencing tokens of the grants `caller`'s session received, in order.
    func grants(to caller: Caller) -> [UInt64] {
        pushes(to: caller).compactMap { if case .granted(_, let token) = $0 { token } else { nil } }
    }

    func revoke(_ lock: String, _ channel: String = "room", from userId: UserID, by caller: Caller) async throws {
        _ = try await bus.request(RevokeLock(caller: caller, lock: LockAddress(.message, channel, lock), userId: userId))
    }

    func remove(_ lock: String, _ channel: String = "room", by caller: Caller) async throws {
        _ = try await bus.request(RemoveLock(caller: caller, lock: LockAddress(.message, channel, lock)))
    }

    /// Moves the manual clock once the lock module's ticker sleeps, and returns when the tick it
    /// caused has been handled (the ticker sleeps again).
    func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await harness.clock.waitForSleepers(), "the ticker never slept", sourceLocation: sourceLocation)
        harness.clock.advance(by: duration)
        #expect(await harness.clock.waitForSleepers(), "the ticker did not sleep again", sourceLocation: sourceLocation)
    }
}

/// Expects `body` to fail with `code`.
func expectError(_ code: RtmErrorCode, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected \(code)", sourceLocation: sourceLocation)
    } catch {
        #expect((error as? RtmError)?.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

/// A lock store that suspends on every call before handing it to an in-memory store: the module
/// must reach its locks only through `LockStore`, and keep its order when the store suspends.
final class SuspendingLockStore: LockStore {
    let calls = SuspendingCalls()
    let inner: InMemoryLockStore

    init(_ inner: InMemoryLockStore) { self.inner = inner }

    func setLock(_ name: String, in channel: ChannelKey, ttl: Int, maxLocks: Int, maxLocksInApp: Int) async throws(LockRefusal) -> [LockEffect] {
        await calls.pause("setLock")
        return try inner.setLock(name, in: channel, ttl: ttl, maxLocks: maxLocks, maxLocksInApp: maxLocksInApp)
    }
    func removeLock(_ name: String, in channel: ChannelKey) async throws(LockRefusal) -> [LockEffect] {
        await calls.pause("removeLock")
        return try inner.removeLock(name, in: channel)
    }
    func acquireLock(_ name: String, in channel: ChannelKey, by caller: Caller, wait: Bool, now: WallClockTime) async throws(LockRefusal) -> (LockAcquisition, [LockEffect]) {
        await calls.pause("acquireLock")
        return try inner.acquireLock(name, in: channel, by: caller, wait: wait, now: now)
    }
    func releaseLock(_ name: String, in channel: ChannelKey, by caller: Caller, now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        await calls.pause("releaseLock")
        return try inner.releaseLock(name, in: channel, by: caller, now: now)
    }
    func revokeLock(_ name: String, in channel: ChannelKey, from owner: UserID, now: WallClockTime) async throws(LockRefusal) -> [LockEffect] {
        await calls.pause("revokeLock")
        return try inner.revokeLock(name, in: channel, from: owner, now: now)
    }
    func counts(in app: AppID?) async -> LockCounts {
        await calls.pause("counts")
        return inner.counts(in: app)
    }
    func locks(in channel: ChannelKey) async -> [LockDetail] {
        await calls.pause("locks")
        return inner.locks(in: channel)
    }
    func holder(of name: String, in channel: ChannelKey) async throws(LockRefusal) -> LockHolding? {
        await calls.pause("holder")
        return try inner.holder(of: name, in: channel)
    }
    func sessionSuspended(_ session: SessionID, now: WallClockTime) async {
        await calls.pause("sessionSuspended")
        inner.sessionSuspended(session, now: now)
    }
    func sessionResumed(_ session: SessionID) async {
        await calls.pause("sessionResumed")
        inner.sessionResumed(session)
    }
    func sessionEnded(_ session: SessionID, now: WallClockTime) async -> [LockEffect] {
        await calls.pause("sessionEnded")
        return inner.sessionEnded(session, now: now)
    }
    func sessionLeft(_ session: SessionID, channel: ChannelKey, now: WallClockTime) async -> [LockEffect] {
        await calls.pause("sessionLeft")
        return inner.sessionLeft(session, channel: channel, now: now)
    }
    func expire(now: WallClockTime) async -> [LockEffect] {
        await calls.pause("expire")
        return inner.expire(now: now)
    }
}
