/// Frames that several sessions' push histories keep at once (a fan-out's one frame), each
/// counted here by how many histories hold it: a plain number, changed under the registry's lock,
/// where each history keeping the frame itself would count an atomic reference per receiver, once
/// when it records the push and once when it forgets it.
///
/// Not thread-safe: only the session registry uses it, under its lock (`SessionRegistry.State`),
/// which orders every access; so its variables are not checked for exclusive access at run time,
/// and the slots are plain memory, whose counts change without an array's uniqueness check.
final class SharedFrames<Frame> {
    private struct Slot {
        var frame: Frame?
        var holders: Int32
    }

    /// `capacity` slots; those below `used` are initialized (a freed one holds no frame).
    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<Slot>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var used = 0
    /// Indices of freed slots, reused before the table grows.
    @exclusivity(unchecked) private var free: [Int32] = []

    /// How many frames are kept (held by at least one history, or by the fan-out adding it).
    @exclusivity(unchecked) private(set) var count = 0

    init() {
        capacity = 16
        slots = .allocate(capacity: capacity)
    }

    deinit {
        slots.deinitialize(count: used)
        slots.deallocate()
    }

    /// Keeps `frame`, held once by the caller (which lets go of it, `letGo`, once every receiver
    /// had it: so a history that forgets it at once does not free it for the others); returns its
    /// index for `hold`.
    func add(_ frame: consuming Frame) -> Int32 {
        count += 1
        if let index = free.popLast() {
            slots[Int(index)] = Slot(frame: frame, holders: 1)
            return index
        }
        if used == capacity { grow() }
        (slots + used).initialize(to: Slot(frame: frame, holders: 1))
        used += 1
        return Int32(used - 1)
    }

    /// One more history keeps the frame at `index`.
    @inline(__always)
    func hold(_ index: Int32) {
        slots[Int(index)].holders += 1
    }

    /// A holder lets go of the frame at `index`: freed with the last.
    @inline(__always)
    func letGo(_ index: Int32) {
        slots[Int(index)].holders -= 1
        if slots[Int(index)].holders == 0 { remove(index) }
    }

    /// The frame at `index`, which a history holds.
    subscript(index: Int32) -> Frame {
        slots[Int(index)].frame!
    }

    private func remove(_ index: Int32) {
        slots[Int(index)].frame = nil
        free.append(index)
        count -= 1
        // A table that grew for a burst gives its room back once it is empty again.
        if count == 0 && capacity > 1024 {
            slots.deinitialize(count: used)
            slots.deallocate()
            capacity = 16
            slots = .allocate(capacity: capacity)
            used = 0
            free = []
        }
    }

    private func grow() {
        let larger = UnsafeMutablePointer<Slot>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: slots, count: used)
        slots.deallocate()
        slots = larger
        capacity *= 2
    }
}
