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
/// ring has grown, and touches as little memory as it can: pushes sit in a ring of 12-byte entries,
/// a channel is a small slot number in a per-session table, found by comparing with the channel of
/// the previous push (kept beside the ring) first. Past the frame bound the oldest pushes are
/// forgotten `forgetBatch` at a time, not one per push: the oldest entry, written a bound's worth
/// of pushes ago, is long out of the cache, and reading several in a row costs about what reading
/// one does. What a caller sees is exact all the same: the pushes stored past the frame bound are
/// not replayed, counted or reported as kept, and are reported lost like any forgotten push; what
/// they hold is freed at most a batch late.
///
/// A small message push written at once to this session alone is kept as a copy of its bytes
/// (`recordCopy`) in a byte ring, not as a frame: it needs no frame of its own, and forgetting it
/// frees nothing (freeing a frame kept a while waits for memory). A push whose one frame goes to
/// many sessions at once is kept as its index in the registry's `SharedFrames`
/// (`record(shared:…)`), counted there without an atomic reference count per receiver. Other
/// pushes (held, or for a detached session) are kept as frames.
struct PushHistory<Frame> {
    /// Limits on what is kept.
    struct Bounds: Equatable {
        var frames: Int
        var bytes: Int
    }

    /// One push in the ring: how it is kept, its size and its channel's slot (12 bytes).
    private struct Entry {
        /// A copy's byte count in `copies`, or a frame's index in `sharedFrames`; unused for a
        /// frame of its own (in `frames`, at the same index as the entry).
        let reference: Int32
        let size: Int32
        let slot: UInt16
        let kind: Kind

        static var empty: Entry { Entry(reference: 0, size: 0, slot: 0, kind: .empty) }
    }

    /// How a push is kept: as the frame it was sent as (in `frames`), as a copy of its bytes in
    /// `copies`, or as a frame in `sharedFrames`.
    private enum Kind: UInt8 {
        case empty, frame, copy, shared
    }

    // Stored properties in the order a push reads them: a fan-out records a push in every
    // receiver's history, and the ones it reads come first, in as few cache lines as they fit.

    /// How many pushes the session was given so far.
    private(set) var sent: UInt64 = 0
    /// Stored pushes in a ring, oldest at `head`: the kept ones, after at most `forgetBatch - 1`
    /// forgotten ones not yet taken out (past the frame bound only).
    private var ring: [Entry] = []
    // `head` and `stored`, as two 32-bit numbers side by side (a ring never holds 2^31 pushes).
    private var headIndex: Int32 = 0
    private var storedCount: Int32 = 0
    /// The sizes of the stored pushes added up.
    private var storedBytes = 0
    // The bounds in force (kept as two 32-bit numbers: every session has a history).
    private var boundFrames: Int32
    private var boundBytes: Int32
    /// The slot of the channel of the latest push that named one (`noSlot`: none yet), and that
    /// channel's type and name, kept apart so the type fills the slot's padding.
    private var lastSlot = UInt16.max
    private var lastChannelType = RtmChannelType.none
    private var lastChannelName = ""
    /// Where pushes recorded with `record(shared:…)` are kept.
    private let sharedFrames: SharedFrames<Frame>?

    /// The frames of pushes kept as frames, at their entries' indices; empty until one is.
    private var frames: [Frame?] = []
    /// The bytes of the stored pushes recorded as copies, oldest first.
    private var copies = ByteRing()
    private var channels: [ChannelAddress] = []
    /// For each channel slot, the number of its latest forgotten push (0: none forgotten).
    private var forgottenNumber: [UInt64] = []
    /// Slots of forgotten pushes in order of first loss.
    private var forgottenOrder: [UInt16] = []

    /// The bounds in force.
    private(set) var bounds: Bounds {
        get { Bounds(frames: Int(boundFrames), bytes: Int(boundBytes)) }
        set { (boundFrames, boundBytes) = (Int32(clamping: newValue.frames), Int32(clamping: newValue.bytes)) }
    }
    static var maxLostChannels: Int { ResumeLoss.maxChannels }
    /// Channels a session's pushes may name before further ones go unreported.
    private static var maxChannelSlots: Int { 256 }
    private static var noSlot: UInt16 { UInt16.max }
    /// How many pushes past the frame bound are forgotten at once.
    static var forgetBatch: Int { 16 }

    /// Index in `ring` of the oldest stored push.
    private var head: Int {
        get { Int(headIndex) }
        set { headIndex = Int32(newValue) }
    }
    /// How many pushes the ring stores, kept or past the frame bound.
    private var stored: Int {
        get { Int(storedCount) }
        set { storedCount = Int32(newValue) }
    }

    /// An empty history; its first push is numbered `numberedFrom + 1` (a session taken over from
    /// another node goes on from its client's count). `sharedFrames` holds the frames recorded by
    /// index (`record(shared:…)`).
    init(bounds: Bounds, numberedFrom: UInt64 = 0, sharedFrames: SharedFrames<Frame>? = nil) {
        (boundFrames, boundBytes) = (Int32(clamping: bounds.frames), Int32(clamping: bounds.bytes))
        sent = numberedFrom
        self.sharedFrames = sharedFrames
    }

    /// How many pushes are kept.
    var keptCount: Int { min(stored, max(bounds.frames, 0)) }

    /// The bytes of the kept pushes, as counted against the bounds.
    var keptBytes: Int {
        var bytes = storedBytes
        for offset in 0..<(stored - keptCount) { bytes -= Int(ring[slotIndex(afterHead: offset)].size) }
        return bytes
    }

    /// Numbers the next push and keeps it, forgetting the oldest past the bounds.
    mutating func record(_ frame: consuming Frame, size: Int, channel: ChannelAddress?) {
        let entry = Entry(reference: 0, size: Int32(clamping: size), slot: slot(for: channel), kind: .frame)
        makeRoomForOne(size: size)
        let index = keep(entry, size: size)
        if frames.isEmpty { frames = Array(repeating: nil, count: ring.count) }
        frames[index] = frame
        trim()
    }

    /// Numbers the next push and keeps it as the frame at `index` in `sharedFrames` (which must
    /// be set), held there until forgotten.
    /// Returns how this history names the push's channel, for pushes of the same channel that
    /// follow (`record(shared:size:in:)`).
    @discardableResult
    mutating func record(shared index: Int32, size: Int, channel: ChannelAddress?) -> ChannelSlot {
        let slot = slot(for: channel)
        record(shared: index, size: size, in: ChannelSlot(value: slot))
        return ChannelSlot(value: slot)
    }

    /// `record(shared:size:channel:)` for a push of the channel `slot` names, as this history's
    /// `record` returned it (a history's slots never change): no name compared.
    mutating func record(shared index: Int32, size: Int, in slot: ChannelSlot) {
        let entry = Entry(reference: index, size: Int32(clamping: size), slot: slot.value, kind: .shared)
        makeRoomForOne(size: size)
        sharedFrames!.hold(index)
        _ = keep(entry, size: size)
        trim()
    }

    /// How one history names a channel (or no channel): valid for that history only.
    struct ChannelSlot {
        fileprivate let value: UInt16
    }

    /// Lets go of every frame this history holds in `sharedFrames`, as it ends (its session's
    /// outlet is freed); what it keeps is not to be read afterwards.
    mutating func letGoOfSharedFrames() {
        guard let sharedFrames else { return }
        for offset in 0..<stored {
            let entry = ring[slotIndex(afterHead: offset)]
            if entry.kind == .shared { sharedFrames.letGo(entry.reference) }
        }
        ring = []
        frames = []
        head = 0
        stored = 0
        storedBytes = 0
    }

    /// Numbers the next push and keeps a copy of its bytes (`payload`, what a frame of it
    /// carries), forgetting the oldest past the bounds; a replay makes it a frame again.
    mutating func recordCopy(of payload: UnsafeRawBufferPointer, size: Int, channel: ChannelAddress?) {
        let slot = slot(for: channel)
        makeRoomForOne(size: size)
        _ = copies.append(payload)
        _ = keep(Entry(reference: Int32(payload.count), size: Int32(clamping: size), slot: slot, kind: .copy), size: size)
        trim()
    }

    /// Makes room for a push of `size` bytes: with `forgetBatch - 1` pushes stored past the frame
    /// bound, forgets them and the oldest kept one; at the frame bound with a push that would not
    /// fit the bytes bound, forgets the same (so a copy is never added to a byte ring past it). A
    /// full ring takes the next push in place.
    private mutating func makeRoomForOne(size: Int) {
        let frames = max(bounds.frames, 0)
        guard stored > 0, stored >= frames else { return }
        if stored >= frames + Self.forgetBatch - 1 || storedBytes + size > bounds.bytes { forgetOldest(stored - frames + 1) }
    }

    /// Stores `entry` after the newest and returns its index in the ring.
    private mutating func keep(_ entry: Entry, size: Int) -> Int {
        sent += 1
        if stored == ring.count { grow() }
        let index = slotIndex(afterHead: stored)
        ring[index] = entry
        stored += 1
        storedBytes += size
        return index
    }

    /// Applies new bounds (the session gained or lost its connection).
    mutating func rebound(_ newBounds: Bounds) {
        forgetUnkept()
        bounds = newBounds
        trim()
        forgetUnkept()
        // A ring grown under larger bounds gives its room back.
        if ring.count > 2 * max(4, bounds.frames + Self.forgetBatch) { compact() }
        copies.compact()
    }

    /// The kept pushes numbered after `received` (the client's count), in order, and what it
    /// missed that is no longer kept; a push kept as a copy is made a frame by `frameOfCopy`.
    func unreceived(
        after received: UInt64, frameOfCopy: (UnsafeRawBufferPointer) -> Frame
    ) -> (frames: [Frame], loss: ResumeLoss) {
        let keptCount = keptCount
        let unkept = stored - keptCount
        let firstKept = sent - UInt64(keptCount)
        let from = max(received, firstKept)
        guard from < sent || received < firstKept else { return ([], .none) }
        var replayed: [Frame] = []
        if from < sent {
            let skip = Int(from - firstKept)
            replayed.reserveCapacity(keptCount - skip)
            // Copies lie in `copies` in push order from its start: each one's position is the sum of
            // the counts before it.
            var position = copies.start
            for offset in 0..<stored {
                let index = slotIndex(afterHead: offset)
                let entry = ring[index]
                let replays = offset >= unkept + skip
                switch entry.kind {
                case .frame: if replays, let frame = frames[index] { replayed.append(frame) }
                case .copy:
                    if replays { replayed.append(copies.withBytes(at: position, count: Int(entry.reference), frameOfCopy)) }
                    position += UInt64(entry.reference)
                case .shared: if replays { replayed.append(sharedFrames![entry.reference]) }
                case .empty: break
                }
            }
        }
        guard received < firstKept else { return (replayed, .none) }
        // The stored pushes past the frame bound are lost as if forgotten already.
        var lastLost = forgottenNumber
        var lossOrder = forgottenOrder
        let firstStored = sent - UInt64(stored)
        for offset in 0..<unkept {
            let slot = ring[slotIndex(afterHead: offset)].slot
            if slot != Self.noSlot {
                Self.forget(slot: slot, number: firstStored + UInt64(offset) + 1, lastLost: &lastLost, order: &lossOrder)
            }
        }
        let lost = lossOrder.filter { lastLost[Int($0)] > received }.map { channels[Int($0)] }
        return (replayed, ResumeLoss(droppedPushes: Int(firstKept - received), channels: lost))
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
        if lastSlot != Self.noSlot, lastChannelType == channel.type, lastChannelName == channel.name { return lastSlot }
        if let index = channels.firstIndex(of: channel) {
            lastSlot = UInt16(index)
            (lastChannelType, lastChannelName) = (channel.type, channel.name)
            return lastSlot
        }
        guard channels.count < Self.maxChannelSlots else { return Self.noSlot }
        channels.append(channel)
        forgottenNumber.append(0)
        lastSlot = UInt16(channels.count - 1)
        (lastChannelType, lastChannelName) = (channel.type, channel.name)
        return lastSlot
    }

    /// Unrolls the ring into order and doubles it (at least 4 slots, at most what the frame bound
    /// and a batch stored past it need).
    private mutating func grow() {
        rebuild(capacity: max(4, min(ring.count * 2, max(bounds.frames + Self.forgetBatch - 1, 1))))
    }

    /// Rebuilds the ring in order, just large enough for what is stored (at least 4 slots).
    private mutating func compact() {
        rebuild(capacity: max(4, stored))
    }

    /// Unrolls the stored pushes into a new ring of at least `capacity` slots, the rest empty.
    private mutating func rebuild(capacity: Int) {
        let capacity = max(capacity, stored + 1)
        var rebuilt: [Entry] = []
        rebuilt.reserveCapacity(capacity)
        for offset in 0..<stored { rebuilt.append(ring[slotIndex(afterHead: offset)]) }
        // Spare room as empty slots, so the next pushes fill the ring without another copy.
        while rebuilt.count < rebuilt.capacity { rebuilt.append(.empty) }
        if !frames.isEmpty {
            var rebuiltFrames: [Frame?] = []
            rebuiltFrames.reserveCapacity(rebuilt.count)
            for offset in 0..<stored { rebuiltFrames.append(frames[slotIndex(afterHead: offset)].take()) }
            while rebuiltFrames.count < rebuilt.count { rebuiltFrames.append(nil) }
            frames = rebuiltFrames
        }
        ring = rebuilt
        head = 0
    }

    /// Forgets the oldest pushes past the bytes bound, having first taken out those past the
    /// frame bound; a history within its bytes keeps the latter stored until `makeRoomForOne`.
    private mutating func trim() {
        guard storedBytes > bounds.bytes else { return }
        forgetUnkept()
        while stored > 0 && storedBytes > bounds.bytes { forgetOldest(1) }
    }

    /// Takes out the stored pushes past the frame bound.
    private mutating func forgetUnkept() {
        let unkept = stored - keptCount
        if unkept > 0 { forgetOldest(unkept) }
    }

    /// Forgets the oldest kept push (reported lost to a resume, like one past the bounds) and
    /// returns its size; 0 when nothing is kept. The memory of a forgotten copy is given back
    /// (the server-wide budget of detached sessions calls this to free memory).
    mutating func forgetOldestPush() -> Int {
        forgetUnkept()
        guard stored > 0 else { return 0 }
        let size = Int(ring[head].size)
        forgetOldest(1)
        copies.compact()
        return size
    }

    /// Bytes the byte ring of copies holds, kept or not.
    var copiesCapacity: Int { copies.capacity }

    /// Takes the oldest `count` stored pushes out of the ring, freeing what they held.
    private mutating func forgetOldest(_ count: Int) {
        for _ in 0..<min(count, stored) {
            let oldest = ring[head]
            // The oldest stored push is the one after the `sent - stored` pushes before it.
            let number = sent - UInt64(stored) + 1
            storedBytes -= Int(oldest.size)
            switch oldest.kind {
            case .copy: copies.removeFirst(Int(oldest.reference))
            case .shared: sharedFrames!.letGo(oldest.reference)
            case .frame: frames[head] = nil
            case .empty: break
            }
            head = slotIndex(afterHead: 1)
            stored -= 1
            if oldest.slot != Self.noSlot {
                Self.forget(slot: oldest.slot, number: number, lastLost: &forgottenNumber, order: &forgottenOrder)
            }
        }
    }

    /// Notes push `number` of the channel in `slot` as lost: in `lastLost`, and in `order` when it
    /// is the channel's first.
    private static func forget(slot: UInt16, number: UInt64, lastLost: inout [UInt64], order: inout [UInt16]) {
        if lastLost[Int(slot)] == 0, order.count < maxLostChannels { order.append(slot) }
        lastLost[Int(slot)] = number
    }
}
