/// A value that may only be read or written on one event loop's thread.
final class LoopConfined<Value>: @unchecked Sendable {
    // Sendable proof: `storage` is only reached through `value`, whose accessors check
    // `loop.inEventLoop` with a precondition, so every access happens on the single loop thread
    // and is therefore serialized; the reference itself may travel between threads freely.
    let loop: EventLoop
    // A plain read or write, never overlapping another access: no run-time exclusivity check.
    // (That holds because `value` has only `get` and `set`; a yielding accessor such as
    // `_modify` would need the check back.)
    @exclusivity(unchecked) private var storage: Value

    init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        self.storage = value
    }

    /// The confined value; only on `loop`'s thread.
    var value: Value {
        get { loop.checkConfined(); return storage }
        set { loop.checkConfined(); storage = newValue }
    }
}
