/// A value read and changed atomically by taking a `PthreadMutex`: what Synchronization's
/// `Atomic` does for the operations Core uses (`load`, `store`, `wrappingAdd`), with nothing
/// newer than macOS 12 / iOS 15. Core's `PortableAtomic` on Apple platforms.
///
/// Each operation holds the lock, so every one is sequentially consistent: at least as strong as
/// any ordering a caller names, which is why the orderings are taken and not looked at. Not
/// lock-free: on Apple platforms Core runs in the SDK, where nothing counts per message as the
/// server does.
struct LockedAtomic<Value: Sendable>: ~Copyable, Sendable {
    /// How a load may be ordered (`Atomic`'s names; all are met by the lock).
    enum LoadOrdering: Sendable { case relaxed, acquiring }
    /// How a store may be ordered (`Atomic`'s names; all are met by the lock).
    enum StoreOrdering: Sendable { case relaxed, releasing }
    /// How a read-modify-write may be ordered (`Atomic`'s names; all are met by the lock).
    enum UpdateOrdering: Sendable { case relaxed, releasing }

    private let cell: PthreadMutex<Value>

    /// An atomic holding `initialValue`.
    init(_ initialValue: Value) {
        cell = PthreadMutex(initialValue)
    }

    /// The value now.
    func load(ordering: LoadOrdering) -> Value {
        cell.withLock { $0 }
    }

    /// Makes `desired` the value.
    func store(_ desired: Value, ordering: StoreOrdering) {
        cell.withLock { $0 = desired }
    }
}

extension LockedAtomic where Value: FixedWidthInteger {
    /// Adds `operand`, wrapping around on overflow; returns the value before and after.
    @discardableResult
    func wrappingAdd(_ operand: Value, ordering: UpdateOrdering) -> (oldValue: Value, newValue: Value) {
        cell.withLock { value in
            let old = value
            value = old &+ operand
            return (old, value)
        }
    }
}
