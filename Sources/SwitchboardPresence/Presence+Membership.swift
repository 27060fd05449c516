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
                await joined(change.member, change.channel, features: features)
            } else {
                await left(change.member, change.channel, departure: change.reason == .sessionClosed(.timedOut) ? .timedOut : .left)
            }
        case .changed:
            return
        case .sessionEnded(let event, let left):
            await leave(event.caller, left.map(\.channel), .left)
            await record(.closed, of: event.caller)
        }
    }

    private func joined(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures) async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                let change = try await store.join(member, channel, features: features)
                try await announce(change, of: member, in: channel, departure: .left, context)
            }
        } catch {
            report(error, "join of \(member) to \(channel)")
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
                    guard let change = try await store.leave(caller, channel) else { continue }
                    try await announce(change, of: caller, in: channel, departure: departure, context)
                }
            }
        } catch {
            report(error, "leave of \(caller) from \(channels.map(\.name))")
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
            if book.note(occupancy: change.occupancy, in: channel, now: context.clock.now, limits: context.limits(for: channel.app)) {
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
    /// `limits.presence.snapshotMaxUsers` in join order), in parts that each fit a frame.
    private func sendSnapshot(
        to member: Caller, in channel: ChannelKey, states: [String: String], _ context: ModuleContext
    ) async throws(RtmError) {
        let page = try await store.members(
            of: channel, after: 0, limit: context.limits(for: member.app).presence.snapshotMaxUsers, budget: .max, withStates: true)
        let occupancy = try await store.occupancy(of: channel)
        let event = PresenceDelivery(
            type: .snapshot, channelType: channel.type, channelName: channel.name, publisher: member.userId,
            states: states, totalOccupancy: occupancy, timestamp: context.clock.wallMilliseconds)
        for part in PresenceParts.snapshot(page.users, as: event) {
            context.outbox.deliver(.presence(part), to: [member.session])
        }
    }
}
