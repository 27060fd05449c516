import SwitchboardCore

/// Other nodes' changes, over a store that publishes them (shared by the nodes of a cluster):
/// the relay brings every change of a channel, this node's own included, in the store's order,
/// and the module tells them to its listeners there, each once, after their snapshot.
extension Presence {
    /// True when the store publishes its changes and a relay brings them: the module tells its
    /// listeners what the relay brings, and nothing of what its calls return.
    var isRelayed: Bool {
        guard store.publishesChanges, case .running(let context, _) = state else { return false }
        return context.bus.hasHandler(OpenPresenceRelay.self)
    }

    /// `session` hears presence events in `channel` from now on: over a relay, the relay listens
    /// first, and the session hears the relayed changes after its snapshot's only.
    func startRelaying(to session: SessionID, in channel: ChannelKey) async {
        guard isRelayed, case .running(let context, _) = state else { return }
        relayListeners[channel, default: [:]][session] = .some(nil)
        do {
            _ = try await context.bus.request(OpenPresenceRelay(channel))
        } catch {
            context.log(.warning, "the presence changes of \(channel) may miss this node: \(error)")
        }
    }

    /// `session` no longer hears presence events in `channel`.
    func stopRelaying(to session: SessionID, in channel: ChannelKey) {
        relayListeners[channel]?[session] = nil
        if relayListeners[channel]?.isEmpty == true { relayListeners[channel] = nil }
    }

    /// A change of a channel's presence, from the store through the relay: told to the listeners
    /// here whose snapshot does not show it (but the session that made it), or gathered in
    /// interval mode. After a gap, every listener here gets a new snapshot, retried while the
    /// store's connection comes back (up to 30 s): a listener must not keep the numbers of what
    /// Redis held before it restarted.
    func relayed(_ request: DeliverRelayedPresence) async {
        let channel = request.channel
        guard case .running(let context, let members) = state else { return }
        do {
            switch request.news {
            case .change(let payload):
                try await turns.run { () async throws(RtmError) in
                    guard let change = store.change(publishedAs: payload), change.channel == channel else {
                        context.log(.warning, "skipped an unreadable presence change of \(channel)")
                        return
                    }
                    let hearing = Set(members.read { $0.listeners(of: channel, hearing: .presence) })
                    let receivers = (relayListeners[channel] ?? [:]).compactMap { session, floor -> SessionID? in
                        guard let floor, floor < change.sequence, hearing.contains(session) else { return nil }
                        return session
                    }.sorted()
                    try await tellOthers(
                        change.kind, of: change.user, in: channel, states: change.states, firstOrLast: change.firstOrLast,
                        occupancy: change.occupancy, except: change.except, context, to: receivers)
                }
            case .mayHaveMissedChanges:
                try await RealTimeRetry.run(attempts: 150, pause: .milliseconds(200)) { () async throws(RtmError) in
                    try await turns.run { () async throws(RtmError) in
                        let listening = relayListeners[channel] ?? [:]
                        for member in members.read({ $0.members(of: channel) }) where listening[member.session] != nil {
                            let caller = Caller(app: channel.app, userId: member.user, session: member.session)
                            try await sendSnapshot(to: caller, in: channel, context)
                        }
                    }
                }
            }
        } catch {
            report(error, "the relayed presence of \(channel)")
        }
    }

    /// Starts `restoreShare` in a task of its own, so the events after it go on while it waits
    /// for the store; one still waiting from an earlier loss gives way (each writes back all that
    /// is missing, one turn at a time).
    func startRestoring() {
        restoring?.cancel()
        restoring = Task { await restoreShare() }
    }

    /// The shared store's link came back and it may have lost everything: the store writes back
    /// this node's memberships and states (the members are told of them as joins, by the relay),
    /// retried while the store's own connection comes back (up to 30 s).
    /// Then each listener here still waiting for its snapshot (its join was not taken) gets it.
    private func restoreShare() async {
        guard case .running(let context, let members) = state else { return }
        do {
            let restored = try await RealTimeRetry.run(attempts: 150, pause: .milliseconds(200)) { () async throws(RtmError) in
                try await turns.run { () async throws(RtmError) in
                    let restored = try await store.restore()
                    for (channel, listening) in relayListeners {
                        let waiting = Set(listening.compactMap { $0.value == nil ? $0.key : nil })
                        for member in members.read({ $0.members(of: channel) }) where waiting.contains(member.session) {
                            try await sendSnapshot(to: Caller(app: channel.app, userId: member.user, session: member.session), in: channel, context)
                        }
                    }
                    return restored
                }
            }
            if restored > 0 { context.log(.warning, "wrote back \(restored) channel memberships the presence store had lost") }
        } catch {
            report(error, "writing back the memberships the presence store had lost")
        }
    }
}
