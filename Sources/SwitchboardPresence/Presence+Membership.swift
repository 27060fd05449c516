import SwitchboardCore

/// Joins, leaves, timeouts and session ends, and what they show to the channel.
extension Presence {
    /// Why a member is no longer shown.
    enum Departure {
        case left, timedOut
    }

    /// Acts on a change of membership, already applied to the roster.
    func membershipChanged(_ update: MembershipUpdate) async {
        switch update {
        case .changed(let change) where isPresenceChannel(change.channel):
            if let features = change.after {
                if change.lost(.presence) { stopRelaying(to: change.member.session, in: change.channel) }
                if change.gained(.presence) { await startRelaying(to: change.member.session, in: change.channel) }
                await joined(change.member, change.channel, features: features, startsHearing: change.gained(.presence))
            } else {
                stopRelaying(to: change.member.session, in: change.channel)
                await left(change.member, change.channel, departure: change.reason == .sessionClosed(.timedOut) ? .timedOut : .left)
            }
        case .changed:
            return
        case .sessionEnded(let event, let left):
            for change in left { stopRelaying(to: event.session, in: change.channel) }
            await leave(event.caller, left.map(\.channel), .left)
            await record(.closed, of: event.caller)
        }
    }

    /// `member` joined `channel` here, or joined again with new features; `startsHearing` when it
    /// asks for presence events here from now on (a session another node held is taken in with
    /// its memberships already in the store: it still needs its snapshot here).
    private func joined(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures, startsHearing: Bool) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                let change = try await store.join(member, channel, features: features)
                try await announce(change, of: member, in: channel, departure: .left, startsHearing: startsHearing, context)
            }
        } catch {
            report(error, "join of \(member) to \(channel)")
            // A shared store that could not take it (Redis coming back, say) is told again once it can.
            if store.publishesChanges { startRestoring() }
        }
    }

    private func left(_ member: Caller, _ channel: ChannelKey, departure: Departure) async {
        await leave(member, [channel], departure)
    }

    /// The presence timeout ended without a resume: the session leaves every channel as timed
    /// out, its states cleared (the `SessionClosed` that follows finds it gone).
    func timedOut(_ caller: Caller) async {
        guard case .running(_, let members) = state else { return }
        await leave(caller, members.read { $0.channels(of: caller.session) }, .timedOut)
    }

    /// Moves a session another node held here, in the store (nobody is told: the session goes
    /// on), and answers its channels; the message router then subscribes it here again, and the
    /// joins it announces find it a member already.
    func takeOver(_ request: TakeOverMemberships) async throws(RtmError) -> [HeldMembership] {
        try await turns.run { () async throws(RtmError) in
            try await store.takeOver(request.caller, fromNode: request.formerNode)
        }
    }

    func record(_ sighting: Sighting, of caller: Caller) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                try await store.record(sighting, of: caller, at: context.clock.wallNow)
            }
        } catch {
            report(error, "\(sighting) of \(caller)")
        }
    }

    /// `caller` leaves `channels` in the store, each announced once: a leave the store had
    /// already made (a timeout before the session's end) is not announced again.
    private func leave(_ caller: Caller, _ channels: [ChannelKey], _ departure: Departure) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                for channel in channels where isPresenceChannel(channel) {
                    guard let change = try await store.leave(caller, channel, timedOut: departure == .timedOut) else { continue }
                    try await announce(change, of: caller, in: channel, departure: departure, startsHearing: false, context)
                }
            }
        } catch {
            report(error, "leave of \(caller) from \(channels.map(\.name))")
        }
    }

    func isPresenceChannel(_ channel: ChannelKey) -> Bool {
        channel.type == .message || channel.type == .stream
    }

    /// Shows others what `change` did: a join when the member became visible, a leave or timeout
    /// when it stopped being visible (gathered instead in interval mode); and sends the member a
    /// snapshot when it just asked for presence, in the store or here (`startsHearing`). Over a
    /// relay, the others hear it from the relay.
    private func announce(
        _ change: MemberChange, of member: Caller, in channel: ChannelKey, departure: Departure, startsHearing: Bool,
        _ context: ModuleContext
    ) async throws(RtmError) {
        let wasVisible = change.before?.isVisible ?? false
        let isVisible = change.after?.isVisible ?? false
        if wasVisible != isVisible && !isRelayed {
            let kind: PublishedPresenceChange.Kind = isVisible ? .joined : departure == .timedOut ? .timedOut : .left
            try await tellOthers(
                kind, of: change.user, in: channel, states: change.states, firstOrLast: change.otherVisibleSessions == 0,
                occupancy: change.occupancy, except: member.session, context)
        }
        if change.after?.contains(.presence) == true, startsHearing || change.before?.contains(.presence) != true {
            try await sendSnapshot(to: member, in: channel, states: change.states, context)
        }
    }

    /// Tells the members of `channel` that hear presence (but `except`) what a member's change
    /// did, or gathers it in interval mode.
    func tellOthers(
        _ kind: PublishedPresenceChange.Kind, of user: UserID, in channel: ChannelKey, states: [String: String],
        firstOrLast: Bool, occupancy: Int, except: SessionID?, _ context: ModuleContext, to receivers: [SessionID]? = nil
    ) async throws(RtmError) {
        let type: RtmPresenceEventType
        switch kind {
        case .stateChanged:
            if book.isGathering(channel) {
                book.record(.stateChanged(user, states: states), in: channel)
                return
            }
            type = .remoteStateChanged
        case .joined, .left, .timedOut:
            if book.note(occupancy: occupancy, in: channel, now: context.clock.now, limits: context.limits(for: channel.app)) {
                guard firstOrLast else { return }
                let gathered: IntervalBook.Change =
                    switch kind {
                    case .joined: .joined(user, states: states)
                    case .timedOut: .timedOut(user)
                    default: .left(user)
                    }
                book.record(gathered, in: channel)
                return
            }
            type = kind == .joined ? .remoteJoinChannel : kind == .timedOut ? .remoteConnectionTimeout : .remoteLeaveChannel
        }
        let event = PresenceDelivery(
            type: type, channelType: channel.type, channelName: channel.name, publisher: user, states: states,
            firstOrLast: kind == .stateChanged ? false : firstOrLast, timestamp: context.clock.wallMilliseconds)
        if let receivers {
            context.outbox.deliver(.presence(event), to: receivers.filter { $0 != except })
        } else {
            try await deliver(event, in: channel, except: except, context)
        }
    }

    /// Sends `member` the channel's visible members with their states (the first
    /// `limits.presence.snapshotMaxUsers` in join order), in parts that each fit a frame; over a
    /// relay, notes which change the snapshot shows last.
    func sendSnapshot(
        to member: Caller, in channel: ChannelKey, states: [String: String]? = nil, _ context: ModuleContext
    ) async throws(RtmError) {
        let snapshot = try await store.snapshot(of: channel, limit: context.limits(for: member.app).presence.snapshotMaxUsers)
        if isRelayed {
            guard relayListeners[channel]?.keys.contains(member.session) == true else { return }
            relayListeners[channel]?[member.session] = snapshot.sequence
        }
        let states = states ?? snapshot.users.first { $0.userId == member.userId }?.states ?? [:]
        let event = PresenceDelivery(
            type: .snapshot, channelType: channel.type, channelName: channel.name, publisher: member.userId,
            states: states, totalOccupancy: snapshot.occupancy, timestamp: context.clock.wallMilliseconds)
        for part in PresenceParts.snapshot(snapshot.users, as: event) {
            context.outbox.deliver(.presence(part), to: [member.session])
        }
    }
}
