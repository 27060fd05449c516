import Synchronization

/// The heart of a test store that suspends on every call: a module run over such a store (one
/// that wraps the module's in-memory store) shows that it reaches its state only through its
/// store protocol, and that its ordering holds when every store call gives other work its turn,
/// as a store across the network would.
public final class SuspendingCalls: Sendable {
    private let names = Mutex<[String]>([])

    /// No call yet.
    public init() {}

    /// Records the call `name`, then suspends a few times, so other work runs before it goes on.
    public func pause(_ name: String) async {
        names.withLock { $0.append(name) }
        for _ in 0..<3 { await Task.yield() }
    }

    /// The calls made so far, in order.
    public var recorded: [String] { names.withLock { $0 } }
}
