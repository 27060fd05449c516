#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether the calling thread is handing over the frames of one socket read, and whether the
/// session registry held fan-out pushes back until that read ends (`SessionRegistry` hands them
/// over then, receiver by receiver).
///
/// The connection hub opens the scope for the frames of a read and closes it at the read's end,
/// on the loop's thread, which calls both for every read; a thread that never opened one (a task
/// answering a queued request, a test's harness) has none, and its fan-outs leave at once. The
/// state is the thread's own (a thread-specific value), so no lock is taken to read it.
enum ReadScope {
    /// No read is being handed over on this thread.
    private static let closed = 0
    /// A read is being handed over; nothing held.
    private static let open = 1
    /// A read is being handed over, and the registry holds fan-out pushes for its end.
    private static let holding = 2

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key for the read scope")
        return key
    }()

    private static var state: Int {
        get { Int(bitPattern: pthread_getspecific(key)) }
        set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// Opens the scope of a read on this thread (no change when it is open already).
    static func enter() {
        if state == closed { state = open }
    }

    /// Whether a read is being handed over on this thread, so a fan-out may be held for its end.
    static var isOpen: Bool { state != closed }

    /// The registry holds fan-out pushes for the end of this thread's read.
    static func noteHolding() { state = holding }

    /// Closes this thread's scope; true when fan-out pushes were held for its end.
    static func leave() -> Bool {
        let current = state
        if current != closed { state = closed }
        return current == holding
    }
}
