import Dispatch
import Foundation
import Synchronization
import SwitchboardReference

/// A thread of its own for one SQLite connection, so that blocking disk I/O never runs on Swift's
/// cooperative pool. Callers enqueue jobs and await their answers.
///
/// Writes are committed in groups: the write jobs waiting when the thread comes round run in one
/// transaction, each inside a savepoint (a job that fails is rolled back alone), and every one is
/// answered only after the `COMMIT` has returned, that is once the data is on disk
/// (`synchronous=FULL`). Reads run outside transactions, in queue order, so they never see a
/// write that is not yet durable. The metadata store and the webhook queue each run one.
public final class DatabaseThread: Sendable {
    /// What a job reports once it ran: whether it failed (its savepoint is rolled back), and how
    /// to answer its caller once the batch is durable (nil) or could not be committed (an error).
    struct Outcome: Sendable {
        let failed: Bool
        let answer: @Sendable (RtmError?) -> Void
    }

    private struct Job: Sendable {
        let writes: Bool
        let run: @Sendable (SQLiteConnection) -> Outcome
        let reject: @Sendable (RtmError) -> Void
    }

    private struct Queue {
        var jobs: [Job] = []
        var started = false
        var stopping = false
        var stopped: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let name: String
    /// What the thread's database holds, for the errors its callers get ("the metadata store").
    private let subject: String
    private let queue = Mutex(Queue())
    private let wakeup = DispatchSemaphore(value: 0)

    /// A thread named `name`, not yet started, for `subject` (what its errors call the database).
    public init(name: String, subject: String) {
        self.name = name
        self.subject = subject
    }

    /// Starts the thread, which opens its connection with `open`; returns once it is open. A
    /// second start fails with `alreadyStarted`.
    public func start<Failure: Error>(
        alreadyStarted: Failure, _ open: @escaping @Sendable () -> Result<SQLiteConnection, Failure>
    ) async throws(Failure) {
        let first = queue.withLock { queue -> Bool in
            defer { queue.started = true }
            return !queue.started
        }
        guard first else { throw alreadyStarted }
        let opened: Result<Void, Failure> = await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                switch open() {
                case .success(let connection):
                    continuation.resume(returning: .success(()))
                    serve(connection)
                case .failure(let error):
                    continuation.resume(returning: .failure(error))
                    finish()
                }
            }
            thread.name = name
            thread.start()
        }
        try opened.get()
    }

    /// Runs `body` on the thread and returns its result; with `writes`, inside the next group
    /// commit, answering once it is durable. Errors other than `RtmError` become `storageOperationFailed`.
    public func perform<T: Sendable>(
        writes: Bool, operation: String, _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws(RtmError) -> T {
        let result: Result<T, RtmError> = await withCheckedContinuation { continuation in
            let job = Job(
                writes: writes,
                run: { connection in
                    let result: Result<T, RtmError>
                    do {
                        result = .success(try body(connection))
                    } catch let error as RtmError {
                        result = .failure(error)
                    } catch {
                        result = .failure(RtmError(.storageOperationFailed, operation: operation, reason: "\(error)"))
                    }
                    let failed = if case .failure = result { true } else { false }
                    return Outcome(failed: failed) { commitError in
                        continuation.resume(returning: commitError.map { .failure($0) } ?? result)
                    }
                },
                reject: { continuation.resume(returning: .failure($0)) })
            enqueue(job, operation: operation)
        }
        return try result.get()
    }

    /// Answers what is queued, then closes the connection and ends the thread.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = queue.withLock { queue -> Bool in
                if queue.finished || !queue.started { return true }
                queue.stopping = true
                queue.stopped = continuation
                return false
            }
            if resumeNow { continuation.resume() } else { wakeup.signal() }
        }
    }

    private func enqueue(_ job: Job, operation: String) {
        let accepted = queue.withLock { queue -> Bool in
            guard queue.started, !queue.stopping, !queue.finished else { return false }
            queue.jobs.append(job)
            return true
        }
        if accepted {
            wakeup.signal()
        } else {
            job.reject(RtmError(.storageNotAvailable, operation: operation, reason: "\(subject) is not open"))
        }
    }

    // MARK: The thread

    private func serve(_ connection: SQLiteConnection) {
        while true {
            wakeup.wait()
            let (jobs, stopping) = queue.withLock { queue in
                defer { queue.jobs.removeAll() }
                return (queue.jobs, queue.stopping)
            }
            var index = 0
            while index < jobs.count {
                guard jobs[index].writes else {
                    jobs[index].run(connection).answer(nil)
                    index += 1
                    continue
                }
                var end = index
                while end < jobs.count && jobs[end].writes { end += 1 }
                commit(jobs[index..<end], on: connection)
                index = end
            }
            if stopping && queue.withLock({ $0.jobs.isEmpty }) { break }
        }
        connection.close()
        finish()
    }

    private func commit(_ batch: ArraySlice<Job>, on connection: SQLiteConnection) {
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            let failure = RtmError(.storageOperationFailed, operation: "commit", reason: "cannot begin a transaction: \(error)")
            for job in batch { job.reject(failure) }
            return
        }
        var answers: [@Sendable (RtmError?) -> Void] = []
        var broken: SQLiteError?
        for job in batch {
            do {
                try connection.execute("SAVEPOINT job")
                let outcome = job.run(connection)
                if outcome.failed { try connection.execute("ROLLBACK TO job") }
                try connection.execute("RELEASE job")
                answers.append(outcome.answer)
            } catch {
                broken = error
                break
            }
        }
        if broken == nil {
            do {
                try connection.execute("COMMIT")
                for answer in answers { answer(nil) }
                return
            } catch {
                broken = error
            }
        }
        try? connection.execute("ROLLBACK")
        let failure = RtmError(
            .storageOperationFailed, operation: "commit", reason: "the write was not stored: \(broken.map { "\($0)" } ?? "")")
        for answer in answers { answer(failure) }
        for job in batch.dropFirst(answers.count) { job.reject(failure) }
    }

    /// Marks the thread finished, rejects anything still queued and wakes `stop()`.
    private func finish() {
        let (jobs, stopped) = queue.withLock { queue in
            queue.finished = true
            defer {
                queue.jobs.removeAll()
                queue.stopped = nil
            }
            return (queue.jobs, queue.stopped)
        }
        let failure = RtmError(.storageNotAvailable, operation: "storage", reason: "\(subject) is closed")
        for job in jobs { job.reject(failure) }
        stopped?.resume()
    }
}
