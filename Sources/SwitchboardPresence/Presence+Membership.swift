import SwitchboardCore

/// Joins, leaves, timeouts and session ends, and what they show to the channel.
extension Presence {
    /// Why a member is no longer shown.
    enum Departure {
        case left, timedOut
    }

    func joined(_ event: ChannelJoined) async {
        guard case .running(let context, let ended) = state, isPresenceChannel(event.channel),
            !ended.contains(event.caller.session)
        else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                let change = try await store.join(event.caller, event.channel, features: event.features)
                try await announce(change, of: event.caller, in: event.channel, departure: .left, context)
            }
        } catch {
            report(error, "join of \(event.caller) to \(event.channel)")
        }
    }

    func left(_ event: ChannelLeft) async {
        guard case .running(let context, _) = state, isPresenceChannel(event.channel) else { return }
        let departure: Departure = event.reason == .sessionClosed(.timedOut) ? .timedOut : .left
        do {
            try await turns.run { () async throws(RtmError) in
                // Gone already when the session's end was handled first: announced once.
                guard let change = try await store.leave(event.caller, event.channel) else { return }
                try await announce(change, of: event.caller, in: event.channel, departure: departure, context)
            }
        } catch {
            report(error, "leave of \(event.caller) from \(event.channel)")
        }
    }

    /// The presence timeout ended without a resume: the session leaves every channel as timed
    /// out, its states cleared (the routers' `ChannelLeft`s that follow find it gone).
    func timedOut(_ caller: Caller) async {
        await leaveEverywhere(caller, .timedOut)
    }

    /// The session ended (logout, kick, expiry, timeout): it leaves every channel it is still in.
    func closed(_ caller: Caller) async {
        await leaveEverywhere(caller, .left)
        await record(.closed, of: caller)
    }

    func record(_ sighting: Sighting, of caller: Caller) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                try await store.record(sighting, of: caller, at: context.clock.wallMilliseconds)
            }
        } catch {
            report(error, "\(sighting) of \(caller)")
        }
    }

    private func leaveEverywhere(_ caller: Caller, _ departure: Departure) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                for channel in try await store.channels(of: caller.session) {
                    guard let change = try await store.leave(caller, channel) else { continue }
                    try await announce(change, of: caller, in: channel, departure: departure, context)
                }
            }
        } catch {
            report(error, "end of \(caller)")
        }
    }

    private func isPresenceChannel(_ channel: ChannelKey) -> Bool {
        channel.type == .message || channel.type == .stream
    }

    /// Shows others what `change` did: a join when the member became visible, a leave or timeout
    /// when it stopped being visible (gathered instead in interval mode); and sends the member a
    /// snapshot when it just asked for presence.
    private func announce(
        _ change: MemberChange, of member: Caller, in channel: ChannelKey, departure: Departure,
        _ context: ModuleContext
    ) async throws(RtmError) {
        let wasVisible = change.before?.isVisible ?? false
        let isVisible = change.after?.isVisible ?? false
        if wasVisible != isVisible {
            let firstOrLast = change.otherVisibleSessions == 0
            if book.note(occupancy: change.occupancy, in: channel, now: context.clock.now, limits: context.limits) {
                if firstOrLast {
                    let gathered: IntervalBook.Change =
                        isVisible
                        ? .joined(change.user, states: change.states)
                        : departure == .timedOut ? .timedOut(change.user) : .left(change.user)
                    book.record(gathered, in: channel)
                }
            } else {
                let type: RtmPresenceEventType =
                    isVisible ? .remoteJoinChannel : departure == .timedOut ? .remoteConnectionTimeout : .remoteLeaveChannel
                let event = PresenceDelivery(
                    type: type, channelType: channel.type, channelName: channel.name, publisher: change.user,
                    states: change.states, firstOrLast: firstOrLast, timestamp: context.clock.wallMilliseconds)
                try await deliver(event, in: channel, except: member.session, context)
            }
        }
        if change.after?.contains(.presence) == true, change.before?.contains(.presence) != true {
            try await sendSnapshot(to: member, in: channel, states: change.states, context)
        }
    }

    /// Sends `member` the channel's visible members with their states (the first
    /// `presenceSnapshotMaxUsers` in join order), in parts that each fit a frame.
    private func sendSnapshot(
        to member: Caller, in channel: ChannelKey, states: [String: String], _ context: ModuleContext
    ) async throws(RtmError) {
        let page = try await store.members(
            of: channel, after: 0, limit: context.limits.presenceSnapshotMaxUsers, budget: .max, withStates: true)
        let occupancy = try await store.occupancy(of: channel)
        let event = PresenceDelivery(
            type: .snapshot, channelType: channel.type, channelName: channel.name, publisher: member.userId,
            states: states, totalOccupancy: occupancy, timestamp: context.clock.wallMilliseconds)
        for part in PresenceParts.snapshot(page.users, as: event) {
            context.outbox.deliver(.presence(part), to: [member.session])
        }
    }
}
