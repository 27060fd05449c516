import SwitchboardCore

/// The channels in interval mode and what each gathered since its last interval event.
///
/// A channel enters interval mode when its occupancy exceeds the threshold; from then on its
/// joins, leaves, timeouts and state changes are gathered and sent every period as one interval
/// event. It returns to real-time events once its occupancy has stayed at or below the threshold
/// for the debounce, after a last interval event with what it gathered meanwhile. What is gathered
/// is the net change since the last event: a user who joins and leaves within one period is in
/// neither list. Recording is O(1); an event costs O(k log k) for k gathered changes.
struct IntervalBook: Sendable {
    /// One gathered change.
    enum Change: Sendable, Hashable {
        case joined(UserID, states: [String: String])
        case left(UserID)
        case timedOut(UserID)
        case stateChanged(UserID, states: [String: String])
    }

    /// An interval event due, before its occupancy is filled in.
    struct Due: Sendable, Hashable {
        var channel: ChannelKey
        var info: PresenceIntervalInfo
        /// True when the channel returns to real-time events after this one.
        var last: Bool
    }

    private struct Gathered: Sendable {
        var nextEvent: Duration
        var belowSince: Duration?
        var order: UInt64 = 0
        var joins: [UserID: UInt64] = [:]
        var leaves: [UserID: UInt64] = [:]
        var timeouts: [UserID: UInt64] = [:]
        var states: [UserID: (order: UInt64, states: [String: String])] = [:]

        var isEmpty: Bool { joins.isEmpty && leaves.isEmpty && timeouts.isEmpty && states.isEmpty }

        mutating func stamp() -> UInt64 {
            order += 1
            return order
        }

        mutating func record(_ change: Change) {
            switch change {
            case .joined(let user, let current):
                if leaves.removeValue(forKey: user) != nil || timeouts.removeValue(forKey: user) != nil {
                    // Back within the period: still present, but its state was cleared meanwhile.
                    states[user] = (states[user]?.order ?? stamp(), current)
                } else {
                    joins[user] = joins[user] ?? stamp()
                    if !current.isEmpty { states[user] = (states[user]?.order ?? stamp(), current) }
                }
            case .left(let user), .timedOut(let user):
                states[user] = nil
                if joins.removeValue(forKey: user) == nil {
                    if case .left = change { leaves[user] = stamp() } else { timeouts[user] = stamp() }
                }
            case .stateChanged(let user, let current):
                states[user] = (states[user]?.order ?? stamp(), current)
            }
        }

        mutating func drain() -> PresenceIntervalInfo {
            defer {
                joins.removeAll()
                leaves.removeAll()
                timeouts.removeAll()
                states.removeAll()
            }
            func ordered(_ users: [UserID: UInt64]) -> [UserID] { users.sorted { $0.value < $1.value }.map(\.key) }
            return PresenceIntervalInfo(
                joinUserList: ordered(joins), leaveUserList: ordered(leaves), timeoutUserList: ordered(timeouts),
                userStateList: states.sorted { $0.value.order < $1.value.order }.map { UserState(userId: $0.key, states: $0.value.states) },
                totalOccupancy: 0)
        }
    }

    private var channels: [ChannelKey: Gathered] = [:]

    /// Whether `channel` is in interval mode.
    func isGathering(_ channel: ChannelKey) -> Bool { channels[channel] != nil }

    /// Notes `channel`'s occupancy after a join or leave at `now`, entering interval mode above
    /// the threshold. Returns whether the change is to be gathered (true) or sent at once.
    mutating func note(occupancy: Int, in channel: ChannelKey, now: Duration, limits: Limits) -> Bool {
        let above = occupancy > limits.presence.clampedIntervalThreshold
        guard channels[channel] != nil else {
            if above { channels[channel] = Gathered(nextEvent: now + limits.presence.clampedInterval) }
            return above
        }
        if above {
            channels[channel]?.belowSince = nil
        } else if channels[channel]?.belowSince == nil {
            channels[channel]?.belowSince = now
        }
        return true
    }

    /// Gathers `change` for `channel`, which must be in interval mode.
    mutating func record(_ change: Change, in channel: ChannelKey) {
        channels[channel]?.record(change)
    }

    /// The interval events due at `now`: one per channel whose period ended, and a last one (if it
    /// gathered anything) per channel that stayed at or below the threshold for the debounce; each
    /// channel's period and debounce are its app's (`limitsOf`).
    mutating func due(now: Duration, limitsOf: (AppID) -> Limits) -> [Due] {
        var events: [Due] = []
        for channel in Array(channels.keys) {
            guard var gathered = channels[channel] else { continue }
            let limits = limitsOf(channel.app)
            if let below = gathered.belowSince, now - below >= limits.presence.intervalDebounce {
                channels[channel] = nil
                if !gathered.isEmpty { events.append(Due(channel: channel, info: gathered.drain(), last: true)) }
            } else if now >= gathered.nextEvent {
                let period = limits.presence.clampedInterval
                gathered.nextEvent += period
                if gathered.nextEvent <= now { gathered.nextEvent = now + period }
                events.append(Due(channel: channel, info: gathered.drain(), last: false))
                channels[channel] = gathered
            }
        }
        return events.sorted { ($0.channel.app, $0.channel.type.rawValue, $0.channel.name) < ($1.channel.app, $1.channel.type.rawValue, $1.channel.name) }
    }
}
