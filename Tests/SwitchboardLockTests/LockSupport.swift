import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// A lock module on a manual clock, and the requests and events tests send it.
struct LockWorld {
    let harness: ModuleHarness
    let store: InMemoryLockStore
    var bus: EventBus { harness.bus }

    static func start(limits: Limits = Limits()) async -> LockWorld {
        let store = InMemoryLockStore()
        let harness = await ModuleHarness(limits: limits, modules: [Lock(store: store)])
        return LockWorld(harness: harness, store: store)
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
    func advance(by duration: Duration) async {
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: duration)
        await harness.clock.waitForSleepers()
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
