/// The threads of Swift's global executor (one per core) run every test's task, and also every
/// actor of the in-process servers that end-to-end tests start. A test that loops for a long time
/// without suspending holds one of those threads until it ends: two of them on a two-core machine
/// leave the servers of other tests waiting for seconds, past their clients' timeouts.
public enum SharedExecutor {
    /// Lets the executor's other work go first when `step` is a positive multiple of `interval`:
    /// call it in each step of a long loop.
    @inlinable
    public static func yield(atStep step: Int, every interval: Int) async {
        if step > 0 && step.isMultiple(of: interval) { await Task.yield() }
    }
}
