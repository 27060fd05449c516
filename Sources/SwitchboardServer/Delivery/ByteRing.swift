/// Bytes kept first in, first out, in one buffer that wraps around: a session's history keeps
/// here the small message pushes written at once to it alone (copies of their bytes), so keeping
/// one allocates nothing and forgetting one frees nothing once the buffer has grown.
///
/// Each byte has a position that grows for the life of the ring; what was appended is read back
/// by its position and count until it is removed from the front.
struct ByteRing {
    /// The buffer: empty, or a power of two bytes, of which the kept ones are those at
    /// `position % capacity` for positions from `start` to `end`.
    private var storage: [UInt8] = []
    /// The position of the oldest kept byte.
    private(set) var start: UInt64 = 0
    /// The position after the newest kept byte.
    private(set) var end: UInt64 = 0

    /// The smallest buffer made.
    static var minimumCapacity: Int { 1024 }

    /// How many bytes are kept.
    var count: Int { Int(end - start) }
    /// How many bytes the buffer holds.
    var capacity: Int { storage.count }

    /// Appends a copy of `bytes` (growing the buffer if they do not fit) and returns the
    /// position of the first.
    mutating func append(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        if count + bytes.count > capacity { relayout(capacity: Self.capacity(holding: count + bytes.count)) }
        let position = end
        if !bytes.isEmpty {
            storage.withUnsafeMutableBytes { buffer in
                let offset = Int(position & UInt64(buffer.count - 1))
                let first = min(bytes.count, buffer.count - offset)
                (buffer.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: first)
                if first < bytes.count {
                    buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + first, byteCount: bytes.count - first)
                }
            }
        }
        end += UInt64(bytes.count)
        return position
    }

    /// Forgets the oldest `count` bytes.
    mutating func removeFirst(_ count: Int) {
        precondition(count >= 0 && count <= self.count, "removing more bytes than are kept")
        start += UInt64(count)
    }

    /// Calls `body` with the `count` bytes kept at `position` in one piece (copied into a
    /// temporary array when they wrap around the end of the buffer).
    func withBytes<Result>(at position: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        precondition(position >= start && position + UInt64(count) <= end, "reading bytes that are not kept")
        guard count > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return storage.withUnsafeBytes { buffer in
            let offset = Int(position & UInt64(buffer.count - 1))
            let first = min(count, buffer.count - offset)
            if first == count { return body(UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])) }
            let joined = Array(buffer[offset...]) + Array(buffer[..<(count - first)])
            return joined.withUnsafeBytes(body)
        }
    }

    /// Gives back room the kept bytes no longer need: a buffer more than twice the size that fits
    /// them (the power of two, at least `minimumCapacity`, that holds them) shrinks to that size;
    /// with nothing kept, it goes.
    mutating func compact() {
        if count == 0 {
            storage = []
            return
        }
        let fitting = Self.capacity(holding: count)
        if capacity > 2 * fitting { relayout(capacity: fitting) }
    }

    /// The buffer size for `count` bytes: a power of two, at least `minimumCapacity`.
    private static func capacity(holding count: Int) -> Int {
        guard count > minimumCapacity else { return minimumCapacity }
        return 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
    }

    /// Moves the kept bytes into a buffer of `newCapacity` (a power of two that holds them),
    /// each at its position modulo the new size.
    private mutating func relayout(capacity newCapacity: Int) {
        var moved = [UInt8](repeating: 0, count: newCapacity)
        if count > 0 {
            storage.withUnsafeBytes { old in
                moved.withUnsafeMutableBytes { new in
                    var position = start
                    while position < end {
                        let from = Int(position & UInt64(old.count - 1))
                        let to = Int(position & UInt64(new.count - 1))
                        let run = min(Int(end - position), old.count - from, new.count - to)
                        (new.baseAddress! + to).copyMemory(from: old.baseAddress! + from, byteCount: run)
                        position += UInt64(run)
                    }
                }
            }
        }
        storage = moved
    }
}
