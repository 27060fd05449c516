import SwitchboardCore

/// Cuts snapshots and interval events into pushes that each fit one frame (`PushParts`); every
/// part but the last says `more`.
enum PresenceParts {
    /// The parts of a snapshot of `users`, each a copy of `event` with a share of them.
    static func snapshot(_ users: [UserState], as event: PresenceDelivery) -> [PresenceDelivery] {
        PushParts.parts(of: event, PushParts.cut(users, cost: \.approximateSize)) { $0.snapshot = $1 }
    }

    /// The parts of an interval event carrying `info`, each with a share of its lists and the
    /// whole occupancy.
    static func interval(_ info: PresenceIntervalInfo, as event: PresenceDelivery) -> [PresenceDelivery] {
        enum Entry {
            case join(UserID), leave(UserID), timeout(UserID), state(UserState)
            var cost: Int {
                switch self {
                case .join(let user), .leave(let user), .timeout(let user): user.utf8.count + 5
                case .state(let state): state.approximateSize
                }
            }
        }
        let entries = info.joinUserList.map(Entry.join) + info.leaveUserList.map(Entry.leave)
            + info.timeoutUserList.map(Entry.timeout) + info.userStateList.map(Entry.state)
        return PushParts.parts(of: event, PushParts.cut(entries, cost: \.cost)) { part, group in
            var share = PresenceIntervalInfo(totalOccupancy: info.totalOccupancy)
            for entry in group {
                switch entry {
                case .join(let user): share.joinUserList.append(user)
                case .leave(let user): share.leaveUserList.append(user)
                case .timeout(let user): share.timeoutUserList.append(user)
                case .state(let state): share.userStateList.append(state)
                }
            }
            part.interval = share
        }
    }
}
