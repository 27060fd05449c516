import SwitchboardCore

/// Presence state values under client-side encryption: each value sealed as a string and written
/// in base64 (docs/PROTOCOL.md §9.2); keys stay readable, as channel names do.
extension PayloadSealer {
    /// `items` with their values sealed.
    func seal(_ items: [StateItem]) throws(RtmErrorInfo) -> [StateItem] {
        var sealed: [StateItem] = []
        for item in items { sealed.append(StateItem(key: item.key, value: try sealText(item.value))) }
        return sealed
    }

    /// `states` with their values opened; a value that does not open (another key, a plain value)
    /// is left out, never shown as garbage. Returns how many were left out.
    func open(_ states: [String: String]) -> (states: [String: String], dropped: Int) {
        var opened: [String: String] = [:]
        var dropped = 0
        for (key, value) in states {
            if let text = try? openText(value) { opened[key] = text } else { dropped += 1 }
        }
        return (opened, dropped)
    }

    /// `state` with its values opened.
    func open(_ state: UserState) -> UserState { UserState(userId: state.userId, states: open(state.states).states) }

    /// Every state `event` carries, opened.
    func open(_ event: PresenceDelivery) -> PresenceDelivery {
        var opened = event
        opened.states = open(event.states).states
        opened.snapshot = event.snapshot.map(open)
        opened.interval?.userStateList = event.interval?.userStateList.map(open) ?? []
        return opened
    }
}
