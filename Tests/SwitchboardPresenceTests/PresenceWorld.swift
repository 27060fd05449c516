import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

/// A presence module alone on a bus with a manual clock: the tests play the routers and the
/// session module by publishing their events.
struct PresenceWorld {
    let harness: ModuleHarness

    static let app = "app"
    static func caller(_ userId: String, _ session: UInt64, app: String = PresenceWorld.app) -> Caller {
        Caller(app: app, userId: userId, session: SessionID(session))
    }

    init(limits: Limits = Limits()) async {
        harness = await ModuleHarness(limits: limits, modules: [Presence()])
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
    func advance(by duration: Duration) async {
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: duration)
        await harness.clock.waitForSleepers()
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
