import SwitchboardCore

/// Cuts snapshots and interval events into pushes that each fit one frame
/// (`PresenceSize.partBudget`); every part but the last says `more`.
enum PresenceParts {
    /// The parts of a snapshot of `users`, each a copy of `event` with a share of them.
    static func snapshot(_ users: [UserState], as event: PresenceDelivery) -> [PresenceDelivery] {
        let groups = cut(users, cost: \.approximateSize)
        return groups.enumerated().map { index, group in
            var part = event
            part.snapshot = group
            part.more = index < groups.count - 1
            return part
        }
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
        let groups = cut(entries, cost: \.cost)
        return groups.enumerated().map { index, group in
            var share = PresenceIntervalInfo(totalOccupancy: info.totalOccupancy)
            for entry in group {
                switch entry {
                case .join(let user): share.joinUserList.append(user)
                case .leave(let user): share.leaveUserList.append(user)
                case .timeout(let user): share.timeoutUserList.append(user)
                case .state(let state): share.userStateList.append(state)
                }
            }
            var part = event
            part.interval = share
            part.more = index < groups.count - 1
            return part
        }
    }

    /// `items` in order, in groups whose costs add up to at most the budget (a group has at least
    /// one item); one empty group when there are no items.
    static func cut<Item>(_ items: [Item], cost: (Item) -> Int, budget: Int = PresenceSize.partBudget) -> [[Item]] {
        var groups: [[Item]] = [[]]
        var spent = 0
        for item in items {
            let price = cost(item)
            if !groups[groups.count - 1].isEmpty && spent + price > budget {
                groups.append([])
                spent = 0
            }
            groups[groups.count - 1].append(item)
            spent += price
        }
        return groups
    }
}
