#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A monotonic counter for hot paths: each thread adds to one of several slots, each on a cache
/// line of its own, with a relaxed atomic add, and a reader sums the slots. Threads on different
/// slots never contend for a line; two threads hashed to one slot still count exactly.
///
/// An increment is a thread-id read, a multiply and one uncontended `lock xadd`: no lock, no
/// allocation, no reference counting (the slots are reached without retaining them). That is on
/// Linux; on Apple platforms, where the SDK counts nothing per message, `PortableAtomic` is
/// `LockedAtomic` and an increment takes a lock.
public final class StripedCounter: Sendable {
    /// One slot, padded so that slots allocated one after another sit on different cache lines.
    private final class Slot: Sendable {
        let value = PortableAtomic<UInt64>(0)
        // 15 words after the value: with the object header the slot spans 136 bytes, so no two
        // slots' values share a 64- or 128-byte line.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                              UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// The number of slots: a power of two, at least the cores of a usual server.
    private static let slotCount = 16
    private let slots: [Slot]

    /// A counter at zero.
    public init() {
        slots = (0..<Self.slotCount).map { _ in Slot() }
    }

    /// Adds `amount`.
    @inline(__always)
    public func add(_ amount: UInt64 = 1) {
        let index = Self.slotIndex()
        slots.withUnsafeBufferPointer { slots in
            Unmanaged.passUnretained(slots[index])._withUnsafeGuaranteedRef {
                _ = $0.value.wrappingAdd(amount, ordering: .relaxed)
            }
        }
    }

    /// The sum of every slot: exact once the adders have stopped, and never below a value read
    /// before.
    public var value: UInt64 {
        slots.reduce(0) { $0 &+ $1.value.load(ordering: .relaxed) }
    }

    /// This thread's slot: its thread id (the address of its control block, a few megabytes apart
    /// between threads) mixed by a Fibonacci multiply, top bits taken.
    @inline(__always)
    private static func slotIndex() -> Int {
        #if canImport(Darwin)
        let id = UInt64(UInt(bitPattern: pthread_self()))
        #else
        let id = UInt64(pthread_self())
        #endif
        return Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> 60) & (slotCount - 1)
    }
}
