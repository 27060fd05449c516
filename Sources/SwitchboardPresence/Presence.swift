import SwitchboardCore

/// The presence module: who is in which message and stream channel, their temporary states,
/// snapshots, interval mode, quiet mode, `whoNow`/`whereNow`, and user-level presence.
///
/// It is built only from bus events: channel membership (`ChannelMembership`, kept from
/// `ChannelJoined`/`ChannelLeft`/`SessionClosed`, whoever publishes them) and the session events. It answers `WhoNow`, `WhereNow`, `SetPresenceState`, `GetPresenceState`,
/// `RemovePresenceState` and `GetUserPresence`, and for the server `SetMemberPresenceState`,
/// `ListChannels` and `PresenceStatistics`; it pushes `.presence` events to the members that
/// asked for presence. It never asks another module anything. Its state lives in a
/// `PresenceStore`; its `run()` sends the interval events on the injected clock.
///
/// Over a store that publishes its changes (shared by the nodes of a cluster), the module tells
/// its listeners what the relay brings (`DeliverRelayedPresence`) instead of what each call
/// returns: every node then tells one channel's changes in the store's order, whichever node
/// made them.
public actor Presence: OpeningModule {
    public nonisolated let name = "presence"
    /// How often `run()` looks for interval events that are due.
    public nonisolated let tickInterval: Duration

    /// Where presence lives.
    public nonisolated let store: any PresenceStore
    /// Operations run one at a time, so each announces exactly what its store step did.
    let turns = OneAtATime()
    /// The channels in interval mode (this node's fan-out).
    var book = IntervalBook()
    /// Over a publishing store with a relay: per channel, this node's members that hear presence
    /// events, each with the number of the last change its snapshot showed (nil while the
    /// snapshot is on its way). A relayed change is told to those whose number is below its own.
    var relayListeners: [ChannelKey: [SessionID: UInt64?]] = [:]
    /// The write-back of what a shared store lost, while one runs (`restoreShare`).
    var restoring: Task<Void, Never>?

    enum State {
        case idle
        case running(ModuleContext, members: ChannelMembership)
    }
    var state = State.idle

    /// Creates the module on `store` (in memory by default); `tickInterval` is the resolution of
    /// interval events and of the return to real-time events.
    public init(store: any PresenceStore = InMemoryPresenceStore(), tickInterval: Duration = .milliseconds(250)) {
        self.store = store
        self.tickInterval = tickInterval
    }

    public func start(_ context: ModuleContext) async {
        let members = ChannelMembership()
        state = .running(context, members: members)
        context.bus.subscription()
            .keepingMembership(members) { [self] update in await membershipChanged(update) }
            .on(SessionOpened.self) { [self] event in await record(.opened, of: event.caller) }
            .on(SessionSuspended.self) { [self] event in await record(.suspended, of: event.caller) }
            .on(SessionResumed.self) { [self] event in await record(.resumed, of: event.caller) }
            .on(SessionTimedOut.self) { [self] event in await timedOut(event.caller) }
            .on(SharedStoreReconnected.self) { [self] _ in await startRestoring() }
            // Answered once the events before each request are handled: a client that subscribed,
            // got its answer and then asks about presence finds its join applied.
            .answer(WhoNow.self) { [self] request throws(RtmError) in try await whoNow(request) }
            .answer(WhereNow.self) { [self] request throws(RtmError) in try await whereNow(request) }
            .answer(SetPresenceState.self) { [self] request throws(RtmError) in try await setState(request) }
            .answer(GetPresenceState.self) { [self] request throws(RtmError) in try await getState(request) }
            .answer(RemovePresenceState.self) { [self] request throws(RtmError) in try await removeState(request) }
            .answer(GetUserPresence.self) { [self] request throws(RtmError) in try await userPresence(request) }
            .answer(SetMemberPresenceState.self) { [self] request throws(RtmError) in try await setMemberState(request) }
            .answer(ListChannels.self) { [self] request throws(RtmError) in try await listChannels(request) }
            .answer(PresenceStatistics.self) { [self] request throws(RtmError) in try await statistics(request) }
            .answer(TakeOverMemberships.self) { [self] request throws(RtmError) in try await takeOver(request) }
            .answer(DeliverRelayedPresence.self) { [self] request in
                await relayed(request)
                return Done()
            }
    }

    /// Opens the store (a shared one connects); throws what it throws.
    public func open() async throws {
        try await store.open()
    }

    public func run() async throws {
        guard case .running(let context, _) = state else { return }
        for await _ in context.clock.ticks(every: tickInterval) { await sendDueIntervals() }
        restoring?.cancel()
        await store.close()
    }

    // MARK: Helpers

    func running(_ operation: String) throws(RtmError) -> (ModuleContext, ChannelMembership) {
        guard case .running(let context, let members) = state else {
            throw RtmError(.notInitialized, operation: operation, reason: "the presence module has not been started")
        }
        return (context, members)
    }

    /// Sends `event` to the sessions of `channel` that asked for presence, but `except`.
    func deliver(_ event: PresenceDelivery, in channel: ChannelKey, except: SessionID?, _ context: ModuleContext) async throws(RtmError) {
        var receivers = try await listeners(of: channel)
        if let except { receivers.removeAll { $0 == except } }
        context.outbox.deliver(.presence(event), to: receivers)
    }

    /// This node's sessions of `channel` that hear presence events: the store's, or over a relay
    /// those whose snapshot went out.
    func listeners(of channel: ChannelKey) async throws(RtmError) -> [SessionID] {
        guard isRelayed else { return try await store.listeners(of: channel) }
        return (relayListeners[channel] ?? [:]).compactMap { $0.value == nil ? nil : $0.key }
    }

    /// Logs a store failure met while handling an event (events have no one to answer).
    func report(_ error: RtmError, _ what: String) {
        guard case .running(let context, _) = state else { return }
        context.log(.error, "\(what): \(error)")
    }
}
