/// Runs the completion-block calls of one client one after another, in the order they were made,
/// so `publish(a) { … }` followed by `publish(b) { … }` reaches the server as a, then b.
final class CallQueue: Sendable {
    typealias Job = @Sendable () async -> Void

    private let continuation: AsyncStream<Job>.Continuation

    init() {
        let (jobs, continuation) = AsyncStream<Job>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        Task {
            for await job in jobs { await job() }
        }
    }

    /// Queues `job` after every job queued before it.
    func enqueue(_ job: @escaping Job) { continuation.yield(job) }

    /// Runs what is queued, then stops.
    func finish() { continuation.finish() }
}
