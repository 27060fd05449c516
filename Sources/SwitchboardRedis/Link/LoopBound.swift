import SwitchboardTransport

/// A reference to an object that lives on one event loop: only that loop's thread may use it.
/// The client's state (its connections, the calls awaiting replies, its timers) is such an
/// object, so it needs no lock: every reply is matched and every call queued on the loop.
final class LoopBound<Object: AnyObject>: @unchecked Sendable {
    // Sendable proof: `object` is reached only through `value`, whose getter checks
    // `loop.inEventLoop` with a precondition, so every use happens on the single loop thread and
    // is serialized; the box itself may travel between threads freely. The object is handed to
    // the box before any loop task can reach it, and a task submitted to the loop is ordered
    // after its submission (the loop's inbox lock), so the loop sees it fully made.
    let loop: EventLoop
    private let object: Object

    init(_ object: Object, loop: EventLoop) {
        self.loop = loop
        self.object = object
    }

    /// The object; only on `loop`'s thread.
    var value: Object {
        precondition(loop.inEventLoop, "Redis client state used off its event loop")
        return object
    }
}
