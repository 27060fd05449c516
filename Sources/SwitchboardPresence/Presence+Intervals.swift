import SwitchboardCore

/// Interval mode's clock-driven half: the events sent at the end of each period.
extension Presence {
    /// Sends the interval events that are due. `run()` calls this every tick.
    func sendDueIntervals() async {
        guard case .running(let context, _) = state else { return }
        do {
            try await turns.run { () async throws(RtmError) in
                for due in book.due(now: context.clock.now, limitsOf: context.limits(for:)) {
                    var info = due.info
                    info.totalOccupancy = try await store.occupancy(of: due.channel)
                    let event = PresenceDelivery(
                        type: .interval, channelType: due.channel.type, channelName: due.channel.name, publisher: "",
                        timestamp: context.clock.wallMilliseconds)
                    let receivers = try await listeners(of: due.channel)
                    for part in PresenceParts.interval(info, as: event) {
                        context.outbox.deliver(.presence(part), to: receivers)
                    }
                }
            }
        } catch {
            report(error, "interval events")
        }
    }
}
