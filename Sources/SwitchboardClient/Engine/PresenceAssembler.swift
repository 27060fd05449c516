import SwitchboardCore

/// Joins the parts of a large snapshot or interval event (each part but the last says `more`) into
/// the one event the app gets.
struct PresenceAssembler: Sendable {
    private struct Key: Hashable {
        let type: RtmPresenceEventType
        let channel: ChannelAddress
    }

    private var partial: [Key: PresenceDelivery] = [:]

    /// The whole event once `part` completes it; nil while more parts are to come.
    mutating func add(_ part: PresenceDelivery) -> PresenceDelivery? {
        let key = Key(type: part.type, channel: ChannelAddress(part.channelType, part.channelName))
        var whole = partial.removeValue(forKey: key) ?? PresenceDelivery(
            type: part.type, channelType: part.channelType, channelName: part.channelName, publisher: part.publisher,
            states: part.states, interval: part.interval.map { PresenceIntervalInfo(totalOccupancy: $0.totalOccupancy) },
            firstOrLast: part.firstOrLast, timestamp: part.timestamp)
        whole.snapshot += part.snapshot
        whole.totalOccupancy = part.totalOccupancy
        if let info = part.interval {
            var merged = whole.interval ?? PresenceIntervalInfo(totalOccupancy: 0)
            merged.joinUserList += info.joinUserList
            merged.leaveUserList += info.leaveUserList
            merged.timeoutUserList += info.timeoutUserList
            merged.userStateList += info.userStateList
            merged.totalOccupancy = info.totalOccupancy
            whole.interval = merged
        }
        guard part.more else { return whole }
        partial[key] = whole
        return nil
    }
}
