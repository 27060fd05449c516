import SwitchboardCore

/// The publishes of message channels between reading their receivers and handing their push to
/// the outbox, and the subscription changes that wait for them.
///
/// Publishes run on the callers' threads, not on the router's actor, so an unsubscribe could
/// otherwise be answered while a publish that read the channel's receivers before it still has its
/// push to hand over, and the client would get a message after its `ok`. A change takes a barrier
/// (`barrier(for:)`) after changing the table and is answered once every publish numbered before
/// it has finished (`wait`, `finish`).
struct PublishesInFlight<Waiter> {
    /// Where a change waits: every publish of `channel` numbered below `ticket` has to finish.
    struct Barrier: Equatable {
        let channel: ChannelKey
        let ticket: UInt64
    }

    private struct Channel {
        /// The tickets in flight, in the order they were taken (a handful at most: one per thread).
        var tickets: [UInt64] = []
        var waiters: [(barrier: UInt64, waiter: Waiter)] = []
    }

    private var next: UInt64 = 0
    private var channels: [ChannelKey: Channel] = [:]

    /// A publish of `channel` read its receivers; returns its ticket.
    mutating func start(_ channel: ChannelKey) -> UInt64 {
        let ticket = next
        next += 1
        channels[channel, default: Channel()].tickets.append(ticket)
        return ticket
    }

    /// The publish with `ticket` handed its push over; returns the waiters it was the last one for.
    mutating func finish(_ ticket: UInt64, of channel: ChannelKey) -> [Waiter] {
        guard var entry = channels[channel] else { return [] }
        if let index = entry.tickets.firstIndex(of: ticket) { entry.tickets.remove(at: index) }
        var ready: [Waiter] = []
        if !entry.waiters.isEmpty {
            let oldest = entry.tickets.first ?? .max
            entry.waiters.removeAll { waiting in
                guard oldest >= waiting.barrier else { return false }
                ready.append(waiting.waiter)
                return true
            }
        }
        channels[channel] = entry.tickets.isEmpty && entry.waiters.isEmpty ? nil : entry
        return ready
    }

    /// The barrier a change of `channel` made now waits at; nil when no publish of the channel is
    /// in flight, so the change may be answered at once.
    func barrier(for channel: ChannelKey) -> Barrier? {
        guard channels[channel]?.tickets.isEmpty == false else { return nil }
        return Barrier(channel: channel, ticket: next)
    }

    /// Keeps `waiter` until every publish before `barrier` has finished; false, keeping nothing,
    /// when they all have already.
    mutating func wait(_ waiter: Waiter, at barrier: Barrier) -> Bool {
        guard var entry = channels[barrier.channel], let oldest = entry.tickets.first, oldest < barrier.ticket else {
            return false
        }
        entry.waiters.append((barrier.ticket, waiter))
        channels[barrier.channel] = entry
        return true
    }

    /// How many channels have publishes in flight or changes waiting (for tests).
    var channelCount: Int { channels.count }
}
