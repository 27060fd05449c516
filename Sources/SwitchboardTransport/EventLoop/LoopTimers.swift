import Glibc

/// The timers of one event loop: a binary min-heap on deadline with lazy cancellation, so
/// scheduling and cancelling stay O(log n) with thousands of connections. Loop thread only.
struct LoopTimers {
    private struct Entry {
        let deadline: UInt64
        let id: UInt64
        let action: () -> Void
    }

    private var heap: [Entry] = []
    private var pending: Set<UInt64> = []
    private var cancelled: Set<UInt64> = []
    private var nextID: UInt64 = 1

    /// Monotonic time in nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Number of timers that have neither fired nor been cancelled.
    var count: Int { pending.count }

    /// Schedules `action` after `delay`; returns an id for `cancel`.
    mutating func schedule(after delay: Duration, _ action: @escaping () -> Void) -> UInt64 {
        let (seconds, attoseconds) = delay.components
        let nanos = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        let id = nextID
        nextID += 1
        pending.insert(id)
        heap.append(Entry(deadline: Self.now() + UInt64(nanos), id: id, action: action))
        siftUp(heap.count - 1)
        return id
    }

    /// Cancels a timer that has not fired (cancelling a fired or unknown id does nothing).
    mutating func cancel(_ id: UInt64) {
        if pending.remove(id) != nil { cancelled.insert(id) }
    }

    /// Milliseconds epoll may sleep before the earliest timer, -1 when there is none.
    mutating func timeoutMilliseconds() -> Int32 {
        dropCancelledTop()
        guard let first = heap.first else { return -1 }
        let now = Self.now()
        guard first.deadline > now else { return 0 }
        return Int32(min((first.deadline - now + 999_999) / 1_000_000, 60_000))
    }

    /// Removes and returns the actions whose deadline has passed, earliest first.
    mutating func due() -> [() -> Void] {
        let now = Self.now()
        var fired: [() -> Void] = []
        while true {
            dropCancelledTop()
            guard let first = heap.first, first.deadline <= now else { return fired }
            let entry = popTop()
            pending.remove(entry.id)
            fired.append(entry.action)
        }
    }

    /// Drops every timer.
    mutating func removeAll() {
        heap.removeAll()
        pending.removeAll()
        cancelled.removeAll()
    }

    private mutating func dropCancelledTop() {
        while let first = heap.first, cancelled.contains(first.id) {
            cancelled.remove(first.id)
            _ = popTop()
        }
    }

    private mutating func popTop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return top
    }

    private func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
