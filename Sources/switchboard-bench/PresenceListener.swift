import Synchronization
import SwitchboardBench

/// What one member of the presence run learned from its `presence` pushes: which users it heard
/// join (from its snapshot, real-time joins and interval events), whose state it heard (checked
/// against the value each user set), and how much arrived.
final class PresenceListener: Sendable {
    struct Counts {
        var frames = 0
        var bytes = 0
        var snapshotFrames = 0
        var snapshotUsers = 0
        var realTimeEvents = 0
        var intervalFrames = 0
        var intervalJoins = 0
        var intervalStates = 0
        /// Leaves, timeouts and real-time state changes: none should come (nobody leaves, and
        /// states are set once the channel is in interval mode).
        var unexpected = 0
        /// States whose value was not the one their user set.
        var wrongStates = 0

        mutating func add(_ other: Counts) {
            frames += other.frames
            bytes += other.bytes
            snapshotFrames += other.snapshotFrames
            snapshotUsers += other.snapshotUsers
            realTimeEvents += other.realTimeEvents
            intervalFrames += other.intervalFrames
            intervalJoins += other.intervalJoins
            intervalStates += other.intervalStates
            unexpected += other.unexpected
            wrongStates += other.wrongStates
        }
    }

    private struct State {
        var joined: UserBitmap
        var states: UserBitmap
        var counts = Counts()
        /// The last part of the snapshot that follows the join has arrived.
        var snapshotDone = false
    }

    private let state: Mutex<State>
    /// When the first and the last interval event that named anyone arrived, over every listener.
    private let intervals: IntervalArrivals

    init(users: Int, intervals: IntervalArrivals) {
        state = Mutex(State(joined: UserBitmap(capacity: users), states: UserBitmap(capacity: users)))
        self.intervals = intervals
    }

    var counts: Counts { state.withLock { $0.counts } }
    /// Whether the whole snapshot that follows the join has arrived.
    var snapshotDone: Bool { state.withLock { $0.snapshotDone } }
    /// Users whose state this listener heard, with the value they set.
    var statesHeard: Int { state.withLock { $0.states.count } }

    /// Users this listener heard join, one bit each.
    var joined: UserBitmap { state.withLock { $0.joined } }

    /// A push arrived (on the loop thread).
    func received(_ bytes: [UInt8]) {
        var named = false
        var publisher: Int?
        let eventType = state.withLock { state -> Int? in
            let scan = PresenceScan.scan(bytes) { place, entry in
                guard let user = UserBitmap.number(of: entry.userId) else { return }
                switch place {
                case .snapshot:
                    state.counts.snapshotUsers += 1
                    state.joined.insert(user)
                case .joined:
                    named = true
                    state.counts.intervalJoins += 1
                    state.joined.insert(user)
                case .stateChanged:
                    named = true
                    state.counts.intervalStates += 1
                    if entry.stateCount == 1, let value = entry.firstValue, UserBitmap.number(of: value) == user {
                        state.states.insert(user)
                    } else {
                        state.counts.wrongStates += 1
                    }
                case .left, .timedOut:
                    state.counts.unexpected += 1
                case .publisher:
                    publisher = user
                }
            }
            guard let scan else { return nil }
            state.counts.frames += 1
            state.counts.bytes += bytes.count
            switch scan.eventType {
            case 1:
                state.counts.snapshotFrames += 1
                if !scan.more { state.snapshotDone = true }
            case 2: state.counts.intervalFrames += 1
            case 3:
                // A real-time join names its user as the publisher.
                state.counts.realTimeEvents += 1
                if let publisher { state.joined.insert(publisher) }
            default:
                // Leaves, timeouts and real-time state changes: nobody leaves, and the channel is
                // in interval mode when states are set.
                state.counts.realTimeEvents += 1
                state.counts.unexpected += 1
            }
            return scan.eventType
        }
        if eventType == 2 && named { intervals.arrived(at: MonotonicClock.now()) }
    }
}

/// The first and last arrival of interval events that named users, over all listeners.
final class IntervalArrivals: Sendable {
    private let times = Mutex<(first: UInt64, last: UInt64)>((0, 0))

    func arrived(at now: UInt64) {
        times.withLock { times in
            if times.first == 0 { times.first = now }
            times.last = max(times.last, now)
        }
    }

    /// Seconds from the first to the last arrival; 0 when none arrived.
    var spread: Double { times.withLock { Double($0.last &- $0.first) / 1e9 } }

    /// When the last one arrived (`MonotonicClock`), 0 when none did.
    var last: UInt64 { times.withLock { $0.last } }
}
