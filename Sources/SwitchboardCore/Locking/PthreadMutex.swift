#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a POSIX mutex: what Synchronization's `Mutex` does, with nothing newer than
/// macOS 12 / iOS 15 (`pthread_mutex_t` is in Glibc and Darwin alike). Core's `PortableMutex` on
/// Apple platforms; the same calls as `Mutex` (`init(_:)`, `withLock`), so Core's code compiles
/// against either.
///
/// The mutex lives in memory of its own, allocated once: a `pthread_mutex_t` must never move,
/// and Swift promises no fixed address for a stored property passed `inout`.
final class PthreadMutex<Value>: @unchecked Sendable {
    // Sendable proof: `value` is read and written only inside `withLock`, between
    // `pthread_mutex_lock` and `pthread_mutex_unlock` of `mutex`, so no two threads touch it at
    // once; and, as with `Mutex`, a value goes in and out only as `sending` (disconnected from the
    // caller's other state), so no thread keeps a reference into it outside the lock.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A mutex guarding `initialValue`.
    init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        value = initialValue
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the lock held, and returns what it returns.
    func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
