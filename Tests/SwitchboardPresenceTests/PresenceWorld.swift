import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

/// A presence module alone on a bus with a manual clock: the tests play the routers and the
/// session module by publishing their events.
struct PresenceWorld {
    let harness: ModuleHarness
    /// The store the module runs over when the world was made with `suspendingStore`.
    let suspending: SuspendingPresenceStore?

    static let app = "app"
    static func caller(_ userId: String, _ session: UInt64, app: String = PresenceWorld.app) -> Caller {
        Caller(app: app, userId: userId, session: SessionID(session))
    }

    /// A presence module over an in-memory store, or (`suspendingStore`) over one that suspends on
    /// every call.
    init(limits: Limits = Limits(), suspendingStore: Bool = false) async {
        let seam = suspendingStore ? SuspendingPresenceStore(InMemoryPresenceStore()) : nil
        suspending = seam
        harness = await ModuleHarness(limits: limits, modules: [seam.map { Presence(store: $0) } ?? Presence()])
    }

    var bus: EventBus { harness.bus }

    /// `member` joins (or re-joins with new features) and the module has handled it.
    func join(
        _ member: Caller, _ channel: String, _ features: ChannelFeatures = [.message, .presence],
        type: RtmChannelType = .message
    ) async {
        await bus.publishAndWait(ChannelJoined(caller: member, channel: member.channel(type, channel), features: features))
    }

    /// `member` leaves and the module has handled it.
    func leave(_ member: Caller, _ channel: String, type: RtmChannelType = .message, reason: ChannelLeaveReason = .left) async {
        await bus.publishAndWait(ChannelLeft(caller: member, channel: member.channel(type, channel), reason: reason))
    }

    /// Publishes a session event and waits until the module has handled it.
    func publish<E: BusEvent>(_ event: E) async { await bus.publishAndWait(event) }

    /// The presence events `member`'s session received, in order.
    func events(to member: Caller) -> [PresenceDelivery] {
        harness.outbox.pushes(to: member.session).compactMap { push in
            if case .presence(let event) = push { event } else { nil }
        }
    }

    /// The events of `type` `member` received.
    func events(_ type: RtmPresenceEventType, to member: Caller) -> [PresenceDelivery] {
        events(to: member).filter { $0.type == type }
    }

    func request<R: BusRequest>(_ request: R) async throws -> R.Response {
        try await bus.request(request)
    }

    /// Moves the manual clock by `duration` once the module's ticker sleeps, and returns once the
    /// ticker has handled it and sleeps again.
    func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await harness.clock.waitForSleepers(), "the ticker never slept", sourceLocation: sourceLocation)
        harness.clock.advance(by: duration)
        #expect(await harness.clock.waitForSleepers(), "the ticker did not sleep again", sourceLocation: sourceLocation)
    }

    /// Advances in `step`s until `total` has passed.
    func advance(by total: Duration, step: Duration) async {
        var moved = Duration.zero
        while moved < total {
            await advance(by: step)
            moved += step
        }
    }

    func stop() async { await harness.stop() }
}

/// Runs `body` and checks it throws `RtmError` with `code`.
func expectError(_ code: RtmErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code)", sourceLocation: sourceLocation)
    } catch {
        #expect((error as? RtmError)?.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

/// A presence store that suspends on every call before handing it to an in-memory store: the
/// module must reach presence only through `PresenceStore`, and keep its order when it suspends.
final class SuspendingPresenceStore: PresenceStore {
    let calls = SuspendingCalls()
    let inner: InMemoryPresenceStore

    init(_ inner: InMemoryPresenceStore) { self.inner = inner }

    func join(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures) async throws(RtmError) -> MemberChange {
        await calls.pause("join")
        return try await inner.join(member, channel, features: features)
    }
    func leave(_ member: Caller, _ channel: ChannelKey) async throws(RtmError) -> MemberChange? {
        await calls.pause("leave")
        return try await inner.leave(member, channel)
    }
    func setState(of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits) async throws(RtmError) -> StateChange {
        await calls.pause("setState")
        return try await inner.setState(of: user, in: channel, items: items, limits: limits)
    }
    func removeState(of user: UserKey, in channel: ChannelKey, keys: [String]) async throws(RtmError) -> StateChange {
        await calls.pause("removeState")
        return try await inner.removeState(of: user, in: channel, keys: keys)
    }
    func state(of user: UserKey, in channel: ChannelKey) async throws(RtmError) -> MemberState? {
        await calls.pause("state")
        return try await inner.state(of: user, in: channel)
    }
    func members(of channel: ChannelKey, after cursor: UInt64, limit: Int, budget: Int, withStates: Bool) async throws(RtmError) -> MemberPage {
        await calls.pause("members")
        return try await inner.members(of: channel, after: cursor, limit: limit, budget: budget, withStates: withStates)
    }
    func occupancy(of channel: ChannelKey) async throws(RtmError) -> Int {
        await calls.pause("occupancy")
        return try await inner.occupancy(of: channel)
    }
    func listeners(of channel: ChannelKey) async throws(RtmError) -> [SessionID] {
        await calls.pause("listeners")
        return try await inner.listeners(of: channel)
    }
    func visibleChannels(of user: UserKey) async throws(RtmError) -> [ChannelKey] {
        await calls.pause("visibleChannels")
        return try await inner.visibleChannels(of: user)
    }
    func record(_ sighting: Sighting, of session: Caller, at: WallClockTime) async throws(RtmError) {
        await calls.pause("record")
        try await inner.record(sighting, of: session, at: at)
    }
    func presence(of users: [UserKey], now: WallClockTime) async throws(RtmError) -> [UserPresence] {
        await calls.pause("presence")
        return try await inner.presence(of: users, now: now)
    }
}
