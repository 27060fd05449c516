/// Ticks on a `SwitchboardClock` every `interval`, ending when the iterating task is cancelled.
///
/// Deadlines are fixed from the start, so ticks do not drift; a consumer that falls more than an
/// interval behind skips the ticks it missed instead of running them back to back.
public struct ClockTicks: AsyncSequence, Sendable {
    public typealias Element = PortableDuration

    let clock: any SwitchboardClock
    let interval: PortableDuration

    public func makeAsyncIterator() -> Iterator {
        Iterator(clock: clock, interval: interval, deadline: clock.now + interval)
    }

    /// Yields the clock's `now` at each tick; nil once cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        let clock: any SwitchboardClock
        let interval: PortableDuration
        var deadline: PortableDuration

        public mutating func next() async -> PortableDuration? {
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return nil
            }
            guard !Task.isCancelled else { return nil }
            let now = clock.now
            deadline += interval
            if deadline <= now { deadline = now + interval }
            return now
        }
    }
}

extension SwitchboardClock {
    /// A tick every `interval` on this clock, for a module's `run()`:
    /// `for await _ in context.clock.ticks(every: .seconds(1)) { await sweep() }`.
    public func ticks(every interval: PortableDuration) -> ClockTicks {
        ClockTicks(clock: self, interval: interval)
    }
}
