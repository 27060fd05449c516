import Glibc
import Synchronization

/// The masking keys of the frames a client sends. RFC 6455 §5.3 asks for each to come from a
/// strong source of entropy, unpredictable to the peer: these are the kernel's random bytes,
/// taken 1 KiB at a time (one `getrandom` through `arc4random_buf`) instead of one system call
/// per frame, which cost a sending client more than its framing.
struct MaskKeys {
    private static let shared = Mutex(MaskKeys())

    /// The next key of the process-wide pool.
    static func next() -> (UInt8, UInt8, UInt8, UInt8) { shared.withLock { $0.take() } }

    private var bytes: [UInt8]
    private var used: Int

    /// A pool of `size` bytes (a multiple of 4), filled at the first key.
    init(size: Int = 1024) {
        precondition(size > 0 && size % 4 == 0, "a pool holds whole keys")
        bytes = Array(repeating: 0, count: size)
        used = size
    }

    /// The next four unused random bytes; the pool is filled anew once they are all used.
    mutating func take() -> (UInt8, UInt8, UInt8, UInt8) {
        if used == bytes.count {
            bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
            used = 0
        }
        defer { used += 4 }
        return (bytes[used], bytes[used + 1], bytes[used + 2], bytes[used + 3])
    }
}
