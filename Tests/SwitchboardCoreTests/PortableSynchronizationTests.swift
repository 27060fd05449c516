import Dispatch
import Glibc
import Synchronization
import Testing
@testable import SwitchboardCore

/// Core's locks and atomics: `PthreadMutex` and `LockedAtomic` (what Core uses on Apple
/// platforms, tested here in every build) and `PortableMutex` / `PortableAtomic` (whichever this
/// build picked) keep out of each other's way under contention and give `Atomic`'s results.
@Suite(.timeLimit(.minutes(1))) struct PortableSynchronizationTests {
    /// Threads and tasks that take the lock at once, and the rounds each takes it.
    static let threads = 8
    static let tasks = 32
    static let rounds = 2_000

    /// What the contention tests take a lock through: a read-modify-write of a plain counter that
    /// loses updates unless the lock excludes, with a check that nobody else is inside.
    final class Exclusion: Sendable {
        let inside = Atomic(0)
        let crowded = Atomic(false)

        /// The body of one locked section: counts who is inside, then adds one to `count` in two
        /// steps with a yield of the processor between them.
        func enter(_ count: inout Int) {
            if inside.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue != 1 {
                crowded.store(true, ordering: .relaxed)
            }
            let before = count
            for _ in 0..<8 { sched_yield() }
            count = before + 1
            inside.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        }
    }

    final class PthreadBox: Sendable {
        let mutex = PthreadMutex(0)
    }

    final class PortableBox: Sendable {
        let mutex = PortableMutex(0)
    }

    /// Runs `section` `rounds` times on each of `threads` threads at once, then expects `total`
    /// to have every round and nobody to have found company inside.
    static func expectExclusionOnThreads(_ section: @Sendable (Exclusion) -> Void, total: () -> Int) {
        let exclusion = Exclusion()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<rounds { section(exclusion) }
        }
        #expect(total() == threads * rounds)
        let crowded = exclusion.crowded.load(ordering: .relaxed)
        #expect(!crowded, "two threads were inside the lock at once")
    }

    @Test func pthreadMutexExcludesThreads() {
        let box = PthreadBox()
        Self.expectExclusionOnThreads({ exclusion in box.mutex.withLock { exclusion.enter(&$0) } }, total: { box.mutex.withLock { $0 } })
    }

    @Test func portableMutexExcludesThreads() {
        let box = PortableBox()
        Self.expectExclusionOnThreads({ exclusion in box.mutex.withLock { exclusion.enter(&$0) } }, total: { box.mutex.withLock { $0 } })
    }

    @Test func pthreadMutexExcludesTasks() async {
        let box = PthreadBox()
        let exclusion = Exclusion()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.tasks {
                group.addTask {
                    for round in 0..<(Self.rounds / 10) {
                        box.mutex.withLock { exclusion.enter(&$0) }
                        if round % 16 == 0 { await Task.yield() }
                    }
                }
            }
        }
        #expect(box.mutex.withLock { $0 } == Self.tasks * (Self.rounds / 10))
        let crowded = exclusion.crowded.load(ordering: .relaxed)
        #expect(!crowded, "two tasks were inside the lock at once")
    }

    @Test func aThrowingSectionHandsOnItsErrorAndLeavesTheLockFree() {
        let mutex = PthreadMutex([1])
        #expect(throws: RtmError.self) {
            try mutex.withLock { (values: inout [Int]) throws(RtmError) in
                values.append(2)
                throw RtmError(.invalidParameter, operation: "test", reason: "planned")
            }
        }
        // Taken again on the same thread: a lock left held would never be granted.
        #expect(mutex.withLock { $0 } == [1, 2])
    }

    @Test func lockedAtomicLoadsWhatWasStoredAndAddsWithWraparound() {
        let number = LockedAtomic<Int>(5)
        #expect(number.load(ordering: .relaxed) == 5)
        number.store(-3, ordering: .releasing)
        #expect(number.load(ordering: .acquiring) == -3)
        let added = number.wrappingAdd(10, ordering: .relaxed)
        #expect(added.oldValue == -3 && added.newValue == 7)

        let byte = LockedAtomic<UInt8>(250)
        let wrapped = byte.wrappingAdd(10, ordering: .relaxed)
        #expect(wrapped.oldValue == 250 && wrapped.newValue == 4)
        #expect(byte.load(ordering: .relaxed) == 4)

        let object = PthreadBox()
        let reference = LockedAtomic(Unmanaged.passUnretained(object))
        #expect(reference.load(ordering: .acquiring).takeUnretainedValue() === object)
    }

    final class Counters: Sendable {
        let locked = LockedAtomic<UInt64>(0)
        let portable = PortableAtomic<UInt64>(0)
    }

    @Test func concurrentAddsAreNeverLost() async {
        let counters = Counters()
        DispatchQueue.concurrentPerform(iterations: Self.threads) { _ in
            for _ in 0..<Self.rounds {
                counters.locked.wrappingAdd(1, ordering: .relaxed)
                counters.portable.wrappingAdd(1, ordering: .relaxed)
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.tasks {
                group.addTask {
                    for _ in 0..<Self.rounds { counters.locked.wrappingAdd(2, ordering: .relaxed) }
                }
            }
        }
        let threaded = UInt64(Self.threads * Self.rounds)
        #expect(counters.locked.load(ordering: .relaxed) == threaded + UInt64(2 * Self.tasks * Self.rounds))
        #expect(counters.portable.load(ordering: .relaxed) == threaded)
    }

    @Test func theBuildConditionPicksTheImplementation() {
        // Checked when compiled: each branch assigns the portable names to the types it expects.
        #if SWITCHBOARD_PORTABLE
        let mutex: PthreadMutex<Int> = PortableMutex(1)
        let atomic: LockedAtomic<Int> = PortableAtomic(2)
        #else
        let mutex: Mutex<Int> = PortableMutex(1)
        let atomic: Atomic<Int> = PortableAtomic(2)
        #endif
        #expect(mutex.withLock { $0 } == 1)
        #expect(atomic.load(ordering: .relaxed) == 2)
    }
}
