/// Runs async jobs one after another, in the order they were queued. A task runs only while jobs
/// wait: it starts with the first job and ends when the queue is empty, so an idle queue holds no
/// task (and creating one starts none).
public final class SerialJobs: Sendable {
    /// One job.
    public typealias Job = @Sendable () async -> Void

    private struct State {
        var jobs: [Job] = []
        var running = false
        var finished = false
    }

    private let state = PortableMutex(State())

    /// An empty queue.
    public init() {}

    /// Queues `job` after every job queued before it. Returns false (and drops the job) once the
    /// queue is finished.
    @discardableResult
    public func enqueue(_ job: @escaping Job) -> Bool {
        let start = state.withLock { state -> Bool? in
            guard !state.finished else { return nil }
            state.jobs.append(job)
            defer { state.running = true }
            return !state.running
        }
        guard let start else { return false }
        if start { Task { await drain() } }
        return true
    }

    /// Whether no job is queued or running: every job queued so far has finished.
    public var isIdle: Bool { state.withLock { $0.jobs.isEmpty && !$0.running } }

    /// Runs what is queued, then takes no more jobs.
    public func finish() { state.withLock { $0.finished = true } }

    private func drain() async {
        while true {
            let jobs = state.withLock { state -> [Job] in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                if state.jobs.isEmpty { state.running = false }
                return state.jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { await job() }
        }
    }
}
