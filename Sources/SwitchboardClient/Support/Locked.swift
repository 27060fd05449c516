import Foundation

/// A value behind a lock, for state the SDK shares between threads. Synchronization's `Mutex`
/// would do, but it needs macOS 15 / iOS 18; `NSLock` is everywhere the SDK builds.
final class Locked<Value>: @unchecked Sendable {
    // Safe to share: `value` is read and written only inside `withLock`, while `lock` is held,
    // so no two threads ever touch it at once.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` on the value with the lock held.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked where Value: Sendable {
    /// The value now.
    func load() -> Value { withLock { $0 } }

    /// Sets the value to `new` and returns the one it replaced.
    func exchange(_ new: Value) -> Value {
        withLock { value in
            defer { value = new }
            return value
        }
    }
}
