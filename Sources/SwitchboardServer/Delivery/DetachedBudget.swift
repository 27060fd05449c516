import SwitchboardCore

/// What all detached sessions keep for a resume, against one server-wide budget: the bytes they
/// hold, and the order they were detached in, so the oldest pushes (those of the session detached
/// longest ago) are the first forgotten when the total is over the budget.
struct DetachedBudget: Sendable {
    /// The budget in bytes.
    let limit: Int
    /// What detached sessions hold now.
    private(set) var bytes = 0
    private var order: [(session: SessionID, number: UInt64)] = []
    private var head = 0
    private var detachedAs: [SessionID: UInt64] = [:]
    private var counter: UInt64 = 0

    init(limit: Int) { self.limit = limit }

    var isOver: Bool { bytes > limit }

    /// `session` lost its connection and holds `held` bytes from now on.
    mutating func detached(_ session: SessionID, holding held: Int) {
        guard detachedAs[session] == nil else { return }
        counter += 1
        detachedAs[session] = counter
        order.append((session, counter))
        bytes += held
    }

    /// `session` is attached again, or ended, and held `held` bytes until now.
    mutating func left(_ session: SessionID, holding held: Int) {
        guard detachedAs.removeValue(forKey: session) != nil else { return }
        bytes -= held
        compact()
    }

    /// A detached session's holding changed by `delta` bytes.
    mutating func changed(by delta: Int) { bytes += delta }

    /// Whether `session` counts against the budget.
    func isDetached(_ session: SessionID) -> Bool { detachedAs[session] != nil }

    /// The session detached longest ago.
    mutating func oldest() -> SessionID? {
        dropStaleFront()
        return head < order.count ? order[head].session : nil
    }

    /// How many entries the queue holds (for tests): it never outgrows the sessions detached
    /// since the longest-detached one that still counts.
    var queueLength: Int { order.count - head }

    /// Skips the front entries that no longer count, and gives their room back now and then, so
    /// the queue holds only entries from the oldest detached session still counting onwards.
    private mutating func compact() {
        dropStaleFront()
        if head > 64 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    private mutating func dropStaleFront() {
        while head < order.count, detachedAs[order[head].session] != order[head].number { head += 1 }
    }
}
