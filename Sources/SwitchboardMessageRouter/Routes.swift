import Synchronization
import SwitchboardCore

/// What a publish reads, from any thread, without waiting on the router's actor: who hears each
/// channel's messages (`MessageListeners`, changed only by the actor with what its store
/// answered, before it answers), the channels' rate windows, and which sessions each user has (a
/// `UserSessions`, kept from `SessionOpened` and `SessionClosed` as they are published, so it is
/// current once a login or logout is answered).
final class Routes: Sendable {
    private struct State {
        var listeners = MessageListeners()
        var users = UserSessions()
        var rates: ChannelRates
        var inFlight = PublishesInFlight<CheckedContinuation<Void, Never>>()
    }

    private let state: Mutex<State>
    /// `state.users.generation`, stored after each change under the lock: a publisher's memo of
    /// its receiver is checked against it without taking the lock (`onlySession`).
    private let usersGeneration = Atomic<UInt64>(UserSessions().generation)

    init() {
        state = Mutex(State(rates: ChannelRates()))
    }

    // MARK: Message channels

    /// Applies a change the store made (the actor's part: one change at a time, in store order).
    func apply(_ change: MembershipChange) {
        state.withLock { $0.listeners.apply(change) }
    }

    /// Takes one message of `channel` at `now` and returns its receivers, with the ticket to hand
    /// back to `delivered` once its push is with the outbox; nil when the channel is over its rate
    /// and the message is to be discarded (`perSecond`: the channel's app's per-channel rate,
    /// nil for none).
    func admitMessage(on channel: ChannelKey, now: Duration, perSecond: Int?) -> (receivers: Listeners, ticket: UInt64)? {
        state.withLock { state in
            guard state.rates.admitMessage(on: channel, now: now, perSecond: perSecond) else { return nil }
            return (state.listeners.listeners(of: channel), state.inFlight.start(channel))
        }
    }

    /// The receivers of a message of `channel` another node accepted (its rate was counted
    /// there), with the ticket to hand back to `delivered`.
    func admitRelayed(on channel: ChannelKey) -> (receivers: Listeners, ticket: UInt64) {
        state.withLock { state in
            (state.listeners.listeners(of: channel), state.inFlight.start(channel))
        }
    }

    /// The sessions that hear messages of `channel` now.
    func listeners(of channel: ChannelKey) -> [SessionID] {
        state.withLock { $0.listeners.listeners(of: channel) }.sessions
    }

    /// The publish with `ticket` handed its push to the outbox: changes waiting for it go on.
    func delivered(_ ticket: UInt64, on channel: ChannelKey) {
        let ready = state.withLock { $0.inFlight.finish(ticket, of: channel) }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once every publish of `channel` that read its receivers before now has handed its
    /// push to the outbox: a subscription change waits for this before it is answered.
    func publishesBefore(_ channel: ChannelKey) async {
        guard let barrier = state.withLock({ $0.inFlight.barrier(for: channel) }) else { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            if !state.withLock({ $0.inFlight.wait(waiter, at: barrier) }) { waiter.resume() }
        }
    }

    /// Takes one subscribe attempt of `session` to `channel` at `now` under `limits` (the
    /// channel's app's); false when it is too frequent.
    func admitSubscribe(_ session: SessionID, to channel: ChannelKey, now: Duration, limits: Limits) -> Bool {
        state.withLock { $0.rates.admitSubscribe(session, to: channel, now: now, limits: limits) }
    }

    /// Forgets idle rate windows; returns how many messages were discarded since the last sweep.
    func sweep(now: Duration) -> Int {
        state.withLock { state in
            state.rates.sweep(now: now)
            return state.rates.takeDiscarded()
        }
    }

    /// Messages discarded so far over the per-channel rate.
    var discardedTotal: Int { state.withLock { $0.rates.discardedTotal } }

    // MARK: Users

    /// The sessions of `user` (nearly always one, held without an allocation).
    func sessions(of user: UserKey) -> CompactSet<SessionID> {
        state.withLock { $0.users.sessions(of: user) }
    }

    /// The one session of the user `name` (UTF-8) of `app`, nil when it has none or several: read
    /// from `memo` while no session opened or closed since it was filled there, else looked up
    /// (when `isValid` passes the name) and remembered in it: the memo holds only names that passed.
    /// A memo that holds is read without the lock: the generation is stored once a change is made,
    /// so a publish that finds the one before it is one that read the sessions just before that
    /// change, as it could have under the lock.
    func onlySession(
        ofUser name: UnsafeRawBufferPointer, in app: AppID, memo: inout ReceiverMemo, isValid: (UnsafeRawBufferPointer) -> Bool
    ) -> SessionID? {
        if let session = memo.session(of: name, at: usersGeneration.load(ordering: .acquiring)) { return session }
        return state.withLock { state in
            let generation = state.users.generation
            guard isValid(name), let session = state.users.sessions(of: UserKey(app, String(copyingUTF8: name))).onlyElement
            else { return nil }
            memo.remember(session, of: name, at: generation)
            return session
        }
    }

    /// Starts the view of users' sessions: from now on every session opened or closed on `bus` is
    /// seen as it is published.
    func observeSessions(on bus: EventBus) {
        bus.observe(SessionOpened.self) { [self] event in
            changeUsers { _ = $0.open(event.caller) }
        }
        bus.observe(SessionClosed.self) { [self] event in
            changeUsers { _ = $0.close(event.caller) }
        }
    }

    /// Changes the users' sessions under the lock and publishes their generation.
    private func changeUsers(_ change: (inout UserSessions) -> Void) {
        state.withLock { state in
            change(&state.users)
            usersGeneration.store(state.users.generation, ordering: .releasing)
        }
    }
}
