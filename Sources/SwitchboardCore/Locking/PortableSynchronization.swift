// The one place Core names Synchronization's `Mutex` and `Atomic`
// (tools/check-sdk-platform-symbols.sh holds every other file of the SDK's targets to that).
//
// They need macOS 15 / iOS 18, above the SDK's floor, so on Apple platforms Core uses
// `PthreadMutex` and `LockedAtomic` instead; on Linux it uses Synchronization's own types,
// unchanged, so the server's hot paths (the bus's handler table, `StripedCounter`, the log level)
// compile to exactly what they did. Building with `-Xswiftc -DSWITCHBOARD_PORTABLE` picks the
// Apple implementation on Linux too (tools/check-sdk-portable-build.sh).
#if os(Linux) && !SWITCHBOARD_PORTABLE
import Synchronization

/// A value behind a lock: Synchronization's `Mutex` (on Apple platforms, `PthreadMutex`).
typealias PortableMutex<Value> = Mutex<Value>
/// A value read and changed atomically: Synchronization's `Atomic` (on Apple platforms,
/// `LockedAtomic`).
typealias PortableAtomic<Value: AtomicRepresentable> = Atomic<Value>
#else
/// A value behind a lock: `PthreadMutex` here, Synchronization's `Mutex` on Linux.
typealias PortableMutex<Value> = PthreadMutex<Value>
/// A value read and changed atomically: `LockedAtomic` here, Synchronization's `Atomic` on Linux.
typealias PortableAtomic<Value: Sendable> = LockedAtomic<Value>
#endif
