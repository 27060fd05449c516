import SwitchboardCore

/// The pushes held for one session while its connection is backlogged, in one lane per priority
/// of the reference: the next push out is the oldest of the highest lane that holds any, so a
/// high-priority topic overtakes what lower ones queued, and each lane keeps its order.
struct PriorityBacklog<Frame> {
    /// One held push.
    struct Item {
        let frame: Frame
        /// Bytes counted against the resume buffer.
        let size: Int
        /// Bytes on the wire, counted against the connection's outbound bound.
        let wireBytes: Int
        let channel: ChannelAddress?
    }

    /// The lane of pushes that carry no priority (and of `normal` ones).
    static var normalLane: Int { lane(for: .normal) }

    /// The lane of `priority`: 0 for highest … 3 for low.
    static func lane(for priority: RtmMessagePriority) -> Int {
        switch priority {
        case .highest: 0
        case .high: 1
        case .normal: 2
        case .low: 3
        }
    }

    /// How many pushes are held (first: every push to a session reads it).
    private(set) var count = 0
    /// The lanes, made when the first push is held and dropped when the last is taken, so a
    /// session whose connection keeps up (nearly all) holds none, and a burst gives its room back.
    private var lanes: [[Item]] = []
    /// Index of the oldest item of each lane not yet taken.
    private var heads: [Int] = []
    /// How many wire bytes are held.
    private(set) var wireBytes = 0

    var isEmpty: Bool { count == 0 }

    /// Holds `item` behind the others of `lane`.
    mutating func append(_ item: Item, lane: Int) {
        if lanes.isEmpty {
            lanes = Array(repeating: [], count: 4)
            heads = Array(repeating: 0, count: 4)
        }
        lanes[lane].append(item)
        count += 1
        wireBytes += item.wireBytes
    }

    /// Takes the oldest push of the highest lane that holds any.
    mutating func popFirst() -> Item? {
        for lane in lanes.indices where heads[lane] < lanes[lane].count {
            let item = lanes[lane][heads[lane]]
            heads[lane] += 1
            if heads[lane] == lanes[lane].count {
                lanes[lane].removeAll(keepingCapacity: true)
                heads[lane] = 0
            } else if heads[lane] >= 64 && heads[lane] * 2 >= lanes[lane].count {
                lanes[lane].removeFirst(heads[lane])
                heads[lane] = 0
            }
            count -= 1
            wireBytes -= item.wireBytes
            if count == 0 {
                lanes = []
                heads = []
            }
            return item
        }
        return nil
    }
}
