import SwitchboardCore

/// The recent pushes of one session, numbered from the session's start, so a client that comes
/// back saying how many it received gets the rest again.
///
/// Two bounds apply: a small one while the session has a connection (enough to cover pushes lost
/// on a connection that died before the server noticed) and a large one while it is detached
/// (everything missed, up to the resume bound). Past a bound the oldest pushes are forgotten; the
/// channels they belonged to are remembered (at most `maxLostChannels`) to report what a resume
/// could not restore.
///
/// `record` runs once per receiver of every push, so it does no hashing and no allocation once the
/// ring has grown: pushes sit in a ring buffer, and a channel is a small slot number in a per-session
/// table, found by comparing with the slot of the previous push first. A small message push written
/// at once to this session alone is kept as a copy of its bytes (`recordCopy`) in a byte ring, not as
/// a frame: it needs no frame of its own, and forgetting it frees nothing (freeing a frame kept a
/// while waits for memory). A push whose one frame goes to many sessions at once is kept as its index
/// in the registry's `SharedFrames` (`record(shared:…)`), counted there without an atomic reference
/// count per receiver. Other pushes (held, or for a detached session) are kept as frames.
struct PushHistory<Frame> {
    /// Limits on what is kept.
    struct Bounds: Equatable {
        var frames: Int
        var bytes: Int
    }

    private struct Entry {
        let kept: Kept
        let size: Int32
        let slot: UInt16
    }

    /// How a push is kept: the frame it was sent as, a copy of its bytes in `copies`, or a frame
    /// in `sharedFrames`.
    private enum Kept {
        case frame(Frame)
        case copy(position: UInt64, count: Int32)
        case shared(index: Int32)
    }

    /// How many pushes the session was given so far.
    private(set) var sent: UInt64 = 0
    private(set) var bounds: Bounds
    static var maxLostChannels: Int { ResumeLoss.maxChannels }
    /// Channels a session's pushes may name before further ones go unreported.
    private static var maxChannelSlots: Int { 256 }
    private static var noSlot: UInt16 { UInt16.max }

    /// Kept pushes in a ring; a slot holds nil once its push is forgotten, so a forgotten frame is
    /// freed at once and never held by the ring.
    private var ring: [Entry?] = []
    /// Index in `ring` of the oldest kept push.
    private var head = 0
    private(set) var keptCount = 0
    /// The bytes of the kept pushes, as counted against the bounds.
    private(set) var keptBytes = 0

    /// The bytes of the kept pushes recorded as copies, oldest first.
    private var copies = ByteRing()

    private var channels: [ChannelAddress] = []
    private var lastSlot = UInt16.max
    /// For each channel slot, the number of its latest forgotten push (0: none forgotten).
    private var forgottenNumber: [UInt64] = []
    /// Slots of forgotten pushes in order of first loss.
    private var forgottenOrder: [UInt16] = []
    /// Where pushes recorded with `record(shared:…)` are kept.
    private let sharedFrames: SharedFrames<Frame>?

    /// An empty history; its first push is numbered `numberedFrom + 1` (a session taken over from
    /// another node goes on from its client's count). `sharedFrames` holds the frames recorded by
    /// index (`record(shared:…)`).
    init(bounds: Bounds, numberedFrom: UInt64 = 0, sharedFrames: SharedFrames<Frame>? = nil) {
        self.bounds = bounds
        sent = numberedFrom
        self.sharedFrames = sharedFrames
    }

    /// Numbers the next push and keeps it, forgetting the oldest past the bounds.
    mutating func record(_ frame: consuming Frame, size: Int, channel: ChannelAddress?) {
        let entry = Entry(kept: .frame(frame), size: Int32(clamping: size), slot: slot(for: channel))
        makeRoomForOne()
        keep(entry, size: size)
    }

    /// Numbers the next push and keeps it as the frame at `index` in `sharedFrames` (which must
    /// be set), held there until forgotten.
    mutating func record(shared index: Int32, size: Int, channel: ChannelAddress?) {
        let entry = Entry(kept: .shared(index: index), size: Int32(clamping: size), slot: slot(for: channel))
        makeRoomForOne()
        sharedFrames!.hold(index)
        keep(entry, size: size)
    }

    /// Lets go of every frame this history holds in `sharedFrames`, as it ends (its session's
    /// outlet is freed); what it keeps is not to be read afterwards.
    mutating func letGoOfSharedFrames() {
        guard let sharedFrames else { return }
        for offset in 0..<keptCount {
            if case .shared(let index)? = ring[slotIndex(afterHead: offset)]?.kept { sharedFrames.letGo(index) }
        }
        ring = []
        head = 0
        keptCount = 0
        keptBytes = 0
    }

    /// Numbers the next push and keeps a copy of its bytes (`payload`, what a frame of it
    /// carries), forgetting the oldest past the bounds; a replay makes it a frame again.
    mutating func recordCopy(of payload: UnsafeRawBufferPointer, size: Int, channel: ChannelAddress?) {
        let slot = slot(for: channel)
        makeRoomForOne()
        let position = copies.append(payload)
        keep(Entry(kept: .copy(position: position, count: Int32(payload.count)), size: Int32(clamping: size), slot: slot), size: size)
    }

    /// At the frame bound, makes room first, so a full ring takes the next push in place.
    private mutating func makeRoomForOne() {
        if keptCount > 0 && keptCount >= bounds.frames { forgetOldest() }
    }

    private mutating func keep(_ entry: consuming Entry, size: Int) {
        sent += 1
        if keptCount == ring.count {
            grow(with: entry)
        } else {
            ring[slotIndex(afterHead: keptCount)] = entry
        }
        keptCount += 1
        keptBytes += size
        trim()
    }

    /// Applies new bounds (the session gained or lost its connection).
    mutating func rebound(_ newBounds: Bounds) {
        bounds = newBounds
        trim()
        // A ring grown under larger bounds gives its room back.
        if ring.count > 2 * max(4, bounds.frames) { compact() }
        copies.compact()
    }

    /// The kept pushes numbered after `received` (the client's count), in order, and what it
    /// missed that is no longer kept; a push kept as a copy is made a frame by `frameOfCopy`.
    func unreceived(
        after received: UInt64, frameOfCopy: (UnsafeRawBufferPointer) -> Frame
    ) -> (frames: [Frame], loss: ResumeLoss) {
        let firstKept = sent - UInt64(keptCount)
        let from = max(received, firstKept)
        guard from < sent || received < firstKept else { return ([], .none) }
        var frames: [Frame] = []
        if from < sent {
            let skip = Int(from - firstKept)
            frames.reserveCapacity(keptCount - skip)
            for offset in skip..<keptCount {
                switch ring[slotIndex(afterHead: offset)]?.kept {
                case .frame(let frame)?: frames.append(frame)
                case .copy(let position, let count)?: frames.append(copies.withBytes(at: position, count: Int(count), frameOfCopy))
                case .shared(let index)?: frames.append(sharedFrames![index])
                case nil: break
                }
            }
        }
        guard received < firstKept else { return (frames, .none) }
        let lost = forgottenOrder.filter { forgottenNumber[Int($0)] > received }.map { channels[Int($0)] }
        return (frames, ResumeLoss(droppedPushes: Int(firstKept - received), channels: lost))
    }

    /// The index of the ring slot `offset` slots after the oldest (`offset` at most the ring's
    /// size): a subtraction, not a division, which every push would pay twice.
    @inline(__always)
    private func slotIndex(afterHead offset: Int) -> Int {
        let index = head + offset
        return index >= ring.count ? index - ring.count : index
    }

    private mutating func slot(for channel: ChannelAddress?) -> UInt16 {
        guard let channel else { return Self.noSlot }
        if lastSlot != Self.noSlot, channels[Int(lastSlot)] == channel { return lastSlot }
        if let index = channels.firstIndex(of: channel) {
            lastSlot = UInt16(index)
            return lastSlot
        }
        guard channels.count < Self.maxChannelSlots else { return Self.noSlot }
        channels.append(channel)
        forgottenNumber.append(0)
        lastSlot = UInt16(channels.count - 1)
        return lastSlot
    }

    private mutating func grow(with entry: consuming Entry) {
        // Unroll the ring into order, then double it (at least 4, at most the frame bound).
        rebuild(capacity: max(4, min(ring.count * 2, max(bounds.frames, 1))))
        ring[keptCount] = entry
    }

    /// Rebuilds the ring in order, just large enough for what is kept (at least 4 slots).
    private mutating func compact() {
        rebuild(capacity: max(4, keptCount))
    }

    /// Unrolls the kept pushes into a new ring of at least `capacity` slots, the rest empty.
    private mutating func rebuild(capacity: Int) {
        var rebuilt: [Entry?] = []
        rebuilt.reserveCapacity(max(capacity, keptCount + 1))
        for offset in 0..<keptCount { rebuilt.append(ring[slotIndex(afterHead: offset)]) }
        // Spare room as nil slots, so the next pushes fill the ring without another copy.
        while rebuilt.count < rebuilt.capacity { rebuilt.append(nil) }
        ring = rebuilt
        head = 0
    }

    private mutating func trim() {
        while keptCount > 0 && (keptCount > bounds.frames || keptBytes > bounds.bytes) { forgetOldest() }
    }

    /// Forgets the oldest kept push (reported lost to a resume, like one past the bounds) and
    /// returns its size; 0 when nothing is kept. The memory of a forgotten copy is given back
    /// (the server-wide budget of detached sessions calls this to free memory).
    mutating func forgetOldestPush() -> Int {
        guard keptCount > 0, let size = ring[head]?.size else { return 0 }
        forgetOldest()
        copies.compact()
        return Int(size)
    }

    /// Bytes the byte ring of copies holds, kept or not.
    var copiesCapacity: Int { copies.capacity }

    private mutating func forgetOldest() {
        // Taken out of the ring, not copied: the frame is released once, with no retain first.
        guard let oldest = ring[head].take() else { return }
        // The oldest kept push is the one after the `sent - keptCount` pushes before it.
        let number = sent - UInt64(keptCount) + 1
        keptBytes -= Int(oldest.size)
        // Copies are kept in push order, so the oldest push's copy is the ring's first bytes.
        switch oldest.kept {
        case .copy(let position, let count):
            precondition(position == copies.start, "copies forgotten out of order")
            copies.removeFirst(Int(count))
        case .shared(let index):
            sharedFrames!.letGo(index)
        case .frame:
            break
        }
        head = slotIndex(afterHead: 1)
        keptCount -= 1
        if oldest.slot != Self.noSlot { forget(slot: oldest.slot, number: number) }
    }

    private mutating func forget(slot: UInt16, number: UInt64) {
        if forgottenNumber[Int(slot)] == 0, forgottenOrder.count < Self.maxLostChannels {
            forgottenOrder.append(slot)
        }
        forgottenNumber[Int(slot)] = number
    }
}
