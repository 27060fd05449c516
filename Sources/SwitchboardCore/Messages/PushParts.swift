/// How a push too large for one frame is sent: in parts sent one after the other, each of which
/// fits a frame; every part but the last says `more`, and the receiver joins them into the one
/// event (`PartedEvent`, `PartAssembler`). Presence snapshots and interval events and topic
/// snapshots go this way.
public enum PushParts {
    /// The content one part carries at most, so the whole frame stays under the wire's
    /// 66,560-byte limit.
    public static let budget = 48 * 1024

    /// `items` in order, in groups whose costs add up to at most `budget` (a group has at least
    /// one item); one empty group when there are no items.
    public static func cut<Item>(_ items: [Item], cost: (Item) -> Int, budget: Int = budget) -> [[Item]] {
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

    /// `event` once per group, each copy given its group by `fill` and `more` on all but the last.
    public static func parts<Event: PartedEvent, Item>(
        of event: Event, _ groups: [[Item]], _ fill: (inout Event, [Item]) -> Void
    ) -> [Event] {
        groups.enumerated().map { index, group in
            var part = event
            fill(&part, group)
            part.more = index < groups.count - 1
            return part
        }
    }
}

/// An event that may come in parts (`PushParts`).
public protocol PartedEvent: Sendable {
    /// What tells apart events whose parts could interleave (their type and channel).
    associatedtype PartKey: Hashable & Sendable
    /// The key of the event this part belongs to.
    var partKey: PartKey { get }
    /// True on every part but the last.
    var more: Bool { get set }
    /// The event's server time, the same in each of its parts.
    var timestamp: UInt64 { get }
    /// Adds what `part`, the next part of this event, carries.
    mutating func append(part: Self)
}

/// Joins the parts of events sent in parts into the one event a receiver reports.
public struct PartAssembler<Event: PartedEvent>: Sendable {
    private var partial: [Event.PartKey: Event] = [:]

    /// An assembler with nothing pending.
    public init() {}

    /// The whole event once `part` completes it (at once for an event of one part); nil while
    /// more parts are to come. An event whose parts stopped coming (its connection was lost
    /// and the session with it) is dropped when the next event of its key begins.
    public mutating func add(_ part: Event) -> Event? {
        let key = part.partKey
        var whole = part
        if var started = partial.removeValue(forKey: key), started.timestamp == part.timestamp {
            started.append(part: part)
            whole = started
        }
        guard part.more else {
            whole.more = false
            return whole
        }
        partial[key] = whole
        return nil
    }
}
