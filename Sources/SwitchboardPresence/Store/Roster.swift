import SwitchboardCore

/// The users who show in one channel, in join order, for paging.
///
/// Each arrival gets a sequence number that only grows (the caller hands them out); a page starts
/// after the number of the last user of the page before, so paging a channel whose members do not
/// change returns each exactly once, and a user who stays is never skipped nor repeated. A
/// departure leaves a tombstone that a later compaction removes, so arrivals and departures cost
/// O(1) amortized and a page costs a binary search plus its length; nothing copies the roster.
/// (A Redis store keeps the same shape as a sorted set scored by sequence number.)
///
/// The caller keeps each user's slot (beside the user's other state in the channel, so the roster
/// holds no index of its own) and is told the new slots when a compaction moves them.
struct Roster: Sendable {
    fileprivate struct Slot: Sendable {
        let seq: UInt64
        var user: UserID?
    }

    private var slots: [Slot] = []
    /// How many users show.
    private(set) var count = 0

    /// Adds `user` at the end with sequence number `seq`, larger than every earlier one; returns
    /// its slot.
    mutating func append(_ user: UserID, seq: UInt64) -> Int {
        slots.append(Slot(seq: seq, user: user))
        count += 1
        return slots.count - 1
    }

    /// Removes the user at `slot`. When that compacts the roster, returns the new slot of every
    /// user left (empty otherwise).
    mutating func remove(at slot: Int) -> [(user: UserID, slot: Int)] {
        guard slots[slot].user != nil else { return [] }
        slots[slot].user = nil
        count -= 1
        guard slots.count - count > max(32, count) else { return [] }
        slots.removeAll { $0.user == nil }
        return slots.enumerated().compactMap { index, slot in slot.user.map { ($0, index) } }
    }

    /// The users after sequence number `cursor`, in order, each with its number.
    func users(after cursor: UInt64) -> Walk {
        var low = 0
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].seq <= cursor { low = middle + 1 } else { high = middle }
        }
        return Walk(slots: slots, position: low)
    }

    /// A forward walk over the users from one position, skipping tombstones.
    struct Walk: Sequence, IteratorProtocol {
        fileprivate let slots: [Slot]
        fileprivate var position: Int

        mutating func next() -> (seq: UInt64, user: UserID)? {
            while position < slots.count {
                let slot = slots[position]
                position += 1
                if let user = slot.user { return (slot.seq, user) }
            }
            return nil
        }
    }
}
