import Glibc

/// The timers of one event loop, ordered by deadline; used on the loop thread only.
struct LoopTimers {
    private struct Entry {
        let deadline: UInt64
        let id: UInt64
        let action: () -> Void
    }

    private var entries: [Entry] = []
    private var nextID: UInt64 = 1

    /// Monotonic time in nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Schedules `action` after `delay`; returns an id for `cancel`.
    mutating func schedule(after delay: Duration, _ action: @escaping () -> Void) -> UInt64 {
        let (seconds, attoseconds) = delay.components
        let nanos = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        let deadline = Self.now() + UInt64(nanos)
        let id = nextID
        nextID += 1
        let index = entries.firstIndex { $0.deadline > deadline } ?? entries.endIndex
        entries.insert(Entry(deadline: deadline, id: id, action: action), at: index)
        return id
    }

    /// Cancels a timer that has not fired.
    mutating func cancel(_ id: UInt64) {
        entries.removeAll { $0.id == id }
    }

    /// Milliseconds epoll may sleep before the earliest timer, -1 when there is none.
    func timeoutMilliseconds() -> Int32 {
        guard let first = entries.first else { return -1 }
        let now = Self.now()
        guard first.deadline > now else { return 0 }
        return Int32(min((first.deadline - now + 999_999) / 1_000_000, 60_000))
    }

    /// Removes and returns the actions whose deadline has passed.
    mutating func due() -> [() -> Void] {
        let now = Self.now()
        var count = 0
        while count < entries.count && entries[count].deadline <= now { count += 1 }
        guard count > 0 else { return [] }
        let fired = entries[..<count].map(\.action)
        entries.removeFirst(count)
        return fired
    }

    /// Drops every timer.
    mutating func removeAll() { entries.removeAll() }
}
